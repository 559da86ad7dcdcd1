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

    /**
     * Builds the cap of {@code maxInFlight} leases of {@code lease} each; {@code null} without a cap.
     *
     * @throws IllegalArgumentException naming the setting: a cap below 1, a lease that is not
     *                                  positive or set without a cap
     */
    static InFlight of(RateLimiter shared, Integer maxInFlight, Duration lease, Duration maxWait) {
        if (maxInFlight == null) {
            if (lease != null) {
                throw new IllegalArgumentException("'inFlightLease' applies only with a cap on calls in flight; set "
                        + "'maxInFlight' too, got '" + lease + "'");
            }
            return null;
        }
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("'maxInFlight' must be at least 1 (e.g. 4), got '" + maxInFlight + "'");
        }
        Duration ttl = lease == null ? Permits.Builder.DEFAULT_IN_FLIGHT_LEASE : lease;
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("'inFlightLease' must be positive (e.g. Duration.ofSeconds(30)), got '"
                    + ttl + "'");
        }
        return new InFlight(shared, maxInFlight, ttl, maxWait);
    }

    /**
     * A held lease, or one that holds nothing when the store failed open.
     *
     * @throws PermitUnavailableException if no place came free within {@link #maxWait} (or the store failed closed)
     */
    Lease enter(String key) throws InterruptedException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        long pause = FIRST_PAUSE_NANOS;
        while (true) {
            Lease lease = leases.acquire(key);
            if (Thread.interrupted()) {
                // interrupted while the store answered: no place for this caller (one granted late is returned)
                lease.release();
                throw new InterruptedException("interrupted while waiting for a place in flight");
            }
            long left = deadline - System.nanoTime();
            if (!waitsMore(lease) || left <= 0) {
                return checked(key, lease);
            }
            TimeUnit.NANOSECONDS.sleep(Math.min(left, jittered(pause)));
            pause = Math.min(pause * 2, LONGEST_PAUSE_NANOS);
        }
    }

    /**
     * As {@link #enter}, blocking no thread between retries (each store call blocks a thread of the
     * common pool for its round trip); the stage fails as {@link #enter} throws. The stage is the
     * caller's: completed otherwise first (cancelled, {@code orTimeout}, the caller), it stops
     * asking, and a lease granted after is released at once, so that only a lease the stage
     * completes with is the caller's to release.
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
                if (!lease.decision().allowed()) {
                    result.completeExceptionally(unavailable(key, lease));   // a refused lease holds nothing
                } else if (!result.complete(lease)) {
                    lease.release();   // given up meanwhile: nobody will send under it
                }
                return;
            }
            attempt(key, result, deadline, Math.min(pause * 2, LONGEST_PAUSE_NANOS), Math.min(left, jittered(pause)));
        }, CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS));
    }

    private Lease checked(String key, Lease lease) {
        if (!lease.decision().allowed()) {
            throw unavailable(key, lease);
        }
        return lease;
    }

    private PermitUnavailableException unavailable(String key, Lease lease) {
        return new PermitUnavailableException(key, maxWait, lease.decision());
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
