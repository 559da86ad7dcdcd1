package dev.sluice.testing;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts, per caller, the requests whose handling is over on the server, limiter's completion
 * included (the test application records the end after Sluice's own end of the response: a
 * filter in front of Sluice's, or an async listener registered after Sluice's), so that a test can
 * wait for the server rather than race it. Every wait is bounded (20 s).
 */
public final class Ends {

    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(20);
    private static final Map<String, AtomicInteger> ENDED = new ConcurrentHashMap<>();

    private Ends() {
    }

    /** Called by the test application: one request of {@code caller} is over (ignored for {@code null}). */
    public static void record(String caller) {
        if (caller != null) {
            ENDED.computeIfAbsent(caller, k -> new AtomicInteger()).incrementAndGet();
        }
    }

    /** How many requests of {@code caller} are over. */
    public static int count(String caller) {
        AtomicInteger count = ENDED.get(caller);
        return count == null ? 0 : count.get();
    }

    /** Waits (at most 20 s) until {@code count} requests of {@code caller} are over. */
    public static void await(String caller, int count) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (count(caller) < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("only " + count(caller) + " of " + count + " requests of " + caller
                        + " ended");
            }
            Thread.sleep(5);
        }
    }
}
