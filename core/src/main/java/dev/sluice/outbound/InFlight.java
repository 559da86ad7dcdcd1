package dev.sluice.outbound;

import dev.sluice.ConcurrencyLimiter;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Lease;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The cap on calls in flight: a {@link ConcurrencyLimiter} of {@code max} leases on the shared
 * limiter's store, timeout and shadow mode, its state under the (first) policy name followed by
 * {@code ~inflight}. A lease refused
 * is asked for again after a jittered pause of 5 to 50 ms (doubling from 5), until one is granted
 * or the wait is over: the store has no queue of lease waiters, so a waiter costs one round trip
 * per retry, and waiters are not served first come first served (a released place goes to whichever
 * retries first).
 */
final class InFlight {

    /** Appended to each policy name: the leases live beside the shared limit's state, never in it. */
    static final String SUFFIX = "~inflight";
    private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long LONGEST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final ConcurrencyLimiter leases;
    private final Duration maxWait;

    InFlight(RateLimiter shared, int max, Duration leaseTtl, Duration maxWait) {
        String policy = shared.limits().get(0).policy() + SUFFIX;
        Limit limit;
        try {
            limit = Limit.concurrency(policy, max, leaseTtl);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the in-flight cap of '" + shared.name() + "' (policy '" + policy
                    + "'): " + e.getMessage(), e);
        }
        // leases live in the store alone: with a local failure mode, a failing store lets calls go without one
        this.leases = ConcurrencyLimiter.builder().limit(limit).store(shared.store()).timeout(shared.timeout())
                .failureMode(shared.failureMode() == FailureMode.CLOSED ? FailureMode.CLOSED : FailureMode.OPEN)
                .shadowMode(shared.shadowMode()).build();
        this.maxWait = maxWait;
    }

    int max() {
        return (int) leases.limit().count();
    }

    /** A held lease, or one refused (holding nothing) once {@link #maxWait} is over. */
    Lease enter(String key) throws InterruptedException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        long pause = FIRST_PAUSE_NANOS;
        while (true) {
            Lease lease = leases.acquire(key);
            long left = deadline - System.nanoTime();
            if (!waitsMore(lease) || left <= 0) {
                return lease;
            }
            TimeUnit.NANOSECONDS.sleep(Math.min(left, jittered(pause)));
            pause = Math.min(pause * 2, LONGEST_PAUSE_NANOS);
        }
    }

    /**
     * As {@link #enter}, blocking no thread between retries (each store call blocks a thread of the
     * common pool for its round trip). A lease granted after the stage was completed otherwise
     * (cancelled) is released.
     */
    CompletableFuture<Lease> enterAsync(String key) {
        CompletableFuture<Lease> result = new CompletableFuture<>();
        attempt(key, result, System.nanoTime() + maxWait.toNanos(), FIRST_PAUSE_NANOS, 0);
        return result;
    }

    private void attempt(String key, CompletableFuture<Lease> result, long deadline, long pause, long delay) {
        CompletableFuture.runAsync(() -> {
            if (result.isDone()) {
                return;
            }
            Lease lease;
            try {
                lease = leases.acquire(key);
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
                return;
            }
            long left = deadline - System.nanoTime();
            if (!waitsMore(lease) || left <= 0) {
                if (!result.complete(lease)) {
                    lease.release();   // given up meanwhile: nobody will send under it
                }
                return;
            }
            attempt(key, result, deadline, Math.min(pause * 2, LONGEST_PAUSE_NANOS), Math.min(left, jittered(pause)));
        }, CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS));
    }

    /** Only a refusal is worth asking again: a lease granted, or a store that failed closed, ends the wait. */
    private static boolean waitsMore(Lease lease) {
        return lease.decision().outcome() == Decision.Outcome.REJECTED;
    }

    /** Between half and all of {@code pause}: instances retrying together drift apart. */
    private static long jittered(long pause) {
        return pause / 2 + ThreadLocalRandom.current().nextLong(pause / 2 + 1);
    }

    @Override
    public String toString() {
        return "at most " + max() + " in flight";
    }
}
