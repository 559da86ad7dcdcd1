package dev.sluice.testing;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Named gates for slow requests in the adapters' tests: a request handler {@link #pass}es a gate
 * (blocking until the test {@link #open}s it), and the test can wait until a request has
 * {@linkplain #awaitEntered entered}. Every wait is bounded (20 s) so a broken test fails instead
 * of hanging.
 */
public final class Gates {

    private static final long WAIT_SECONDS = 20;
    private static final Map<String, Gate> GATES = new ConcurrentHashMap<>();

    private record Gate(CountDownLatch entered, CountDownLatch open) {
    }

    private Gates() {
    }

    private static Gate gate(String id) {
        return GATES.computeIfAbsent(id, k -> new Gate(new CountDownLatch(1), new CountDownLatch(1)));
    }

    /** Called by a request handler: marks the gate entered and waits (at most 20 s) until it is opened. */
    public static void pass(String id) {
        Gate gate = gate(id);
        gate.entered.countDown();
        try {
            if (!gate.open.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("gate " + id + " was never opened");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits (at most 20 s) until a request has entered the gate. */
    public static void awaitEntered(String id) throws InterruptedException {
        if (!gate(id).entered.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError("no request entered gate " + id);
        }
    }

    /** Lets the request at the gate (or the next one to come) through. */
    public static void open(String id) {
        gate(id).open.countDown();
    }
}
