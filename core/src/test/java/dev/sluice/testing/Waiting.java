package dev.sluice.testing;

import java.util.concurrent.TimeUnit;

/** Bounded waits for another thread's state, for tests that must act while it waits. */
public final class Waiting {

    private Waiting() {
    }

    /**
     * Returns once {@code thread} is in a timed wait (a sleep, or a wait with a timeout for a
     * store's answer) or has ended; after 10 s at most, whatever its state.
     */
    public static void untilTimedWaiting(Thread thread) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (thread.isAlive() && thread.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
    }
}
