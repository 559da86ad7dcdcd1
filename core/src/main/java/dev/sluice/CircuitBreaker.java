package dev.sluice;

import dev.sluice.internal.UnreadableStateException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Stops a limiter from waiting on a store that keeps failing. After {@value #THRESHOLD}
 * consecutive failures the circuit opens: decisions follow the failure mode at once, costing
 * microseconds instead of the timeout. After a pause (doubling from 250 ms up to 8 s while probes
 * fail) one decision is let through as a probe; its success closes the circuit. Each transition
 * is logged once.
 *
 * <p>Failures are counted by when their requests were sent: a failure counts only if its request
 * was sent after the previous counted failure was seen. Requests in flight together (one
 * coalesced script call, or a burst of callers on a stalled connection) fail together, and are
 * one observation of the store, not hundreds: five counted failures are five rounds of requests
 * that each failed after the last one had.
 *
 * <p>Thread-safe, lock-free; the closed path is one volatile read.
 */
final class CircuitBreaker {

    private static final Logger LOG = LoggerFactory.getLogger(CircuitBreaker.class);
    static final int THRESHOLD = 5;
    private static final long MIN_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final long MAX_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(8);

    private final String name;
    /** Tells the limiter's listener of each change of state. */
    private final ShadowAndListener shadowAndListener;
    private final AtomicInteger failures = new AtomicInteger();
    /** When the last counted failure was seen; requests sent before it that fail are not counted again. */
    private final AtomicLong lastFailureNanos = new AtomicLong(System.nanoTime() - TimeUnit.DAYS.toNanos(1));
    private final AtomicBoolean probing = new AtomicBoolean();
    private volatile boolean open;
    private volatile long openUntil;
    private volatile long pauseNanos = MIN_PAUSE_NANOS;

    CircuitBreaker(String name) {
        this(name, new ShadowAndListener(false, null, name));
    }

    CircuitBreaker(String name, ShadowAndListener shadowAndListener) {
        this.name = name;
        this.shadowAndListener = shadowAndListener;
    }

    /** Whether a decision may go to the store now: always when closed; one probe after a pause when open. */
    boolean tryPass() {
        if (!open) {
            return true;
        }
        if (System.nanoTime() - openUntil >= 0 && probing.compareAndSet(false, true)) {
            shadowAndListener.circuit(CircuitState.HALF_OPEN);
            return true;
        }
        return false;
    }

    void onSuccess() {
        if (open) {
            synchronized (this) {
                if (open) {
                    open = false;
                    pauseNanos = MIN_PAUSE_NANOS;
                    failures.set(0);
                    probing.set(false);
                    LOG.info("Rate-limit store answers again; circuit closed for {}", name);
                    shadowAndListener.circuit(CircuitState.CLOSED);
                }
            }
        } else if (failures.get() != 0) {
            failures.set(0);
        }
    }

    /**
     * A request sent at {@code sentAtNanos} failed with {@code failure}: counted, unless the store
     * answered that it could not read that one caller's state ({@link UnreadableStateException}).
     * The store is up then, so it is an answer: opening the circuit for it would fail every other
     * caller without asking the store.
     */
    void onFailure(long sentAtNanos, Throwable failure) {
        if (failure instanceof UnreadableStateException) {
            onSuccess();
        } else {
            onFailure(sentAtNanos);
        }
    }

    /** A request sent at {@code sentAtNanos} ({@link System#nanoTime()}) failed. */
    void onFailure(long sentAtNanos) {
        if (open) {
            synchronized (this) {
                if (open && probing.get()) {
                    pauseNanos = Math.min(MAX_PAUSE_NANOS, pauseNanos * 2);
                    openUntil = System.nanoTime() + pauseNanos;
                    probing.set(false);
                    shadowAndListener.circuit(CircuitState.OPEN);
                }
            }
            return;
        }
        long last = lastFailureNanos.get();
        if (sentAtNanos - last < 0 || !lastFailureNanos.compareAndSet(last, System.nanoTime())) {
            return; // in flight together with a failure already counted
        }
        if (failures.incrementAndGet() >= THRESHOLD) {
            synchronized (this) {
                if (!open) {
                    openUntil = System.nanoTime() + pauseNanos;
                    open = true;
                    LOG.warn("Rate-limit store failed {} times in a row; circuit open for {}: decisions follow the "
                            + "failure mode without waiting, probing again in {} ms", THRESHOLD, name,
                            TimeUnit.NANOSECONDS.toMillis(pauseNanos));
                    shadowAndListener.circuit(CircuitState.OPEN);
                }
            }
        }
    }

    /** Whether the circuit is open: a decision that passes {@link #tryPass()} now is a probe. */
    boolean isOpen() {
        return open;
    }
}
