package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * An outbound policy: a {@link RateLimiter} whose store the application's instances share, and
 * the longest a call waits for its permit. Each call {@link #acquire acquires} one permit of its
 * key (a provider, a host, an account), waiting for its reserved slot; a call that cannot get one
 * within the wait fails with {@link PermitUnavailableException} and is not sent. The clients of
 * this package and {@code dev.sluice.jaxrs.RateLimitClientFilter} call it; it is usable on its own
 * around any client.
 *
 * <pre>{@code
 * Permits permits = Permits.of(RateLimiter.builder()
 *         .limit(Limit.of("payments", "9/s").withBurst(1))
 *         .store(RedisStore.connect("redis://127.0.0.1:6379"))
 *         .build(), Duration.ofSeconds(5));
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class Permits {

    private final RateLimiter limiter;
    private final Duration maxWait;

    private Permits(RateLimiter limiter, Duration maxWait) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
        limiter.checkCanWait(maxWait);
    }

    /**
     * A policy of {@code limiter}'s limits, waiting at most {@code maxWait} per call.
     *
     * @throws IllegalArgumentException if {@code maxWait} is out of range, or above zero while a
     *                                  limit is a sliding log (which cannot wait), naming it
     */
    public static Permits of(RateLimiter limiter, Duration maxWait) {
        return new Permits(limiter, maxWait);
    }

    /**
     * Waits for one permit of {@code key}.
     *
     * @return the limiter's decision, one that {@linkplain Decision#allowed() allows} the call
     * @throws PermitUnavailableException if none could be had within the wait (nothing spent)
     * @throws InterruptedException       if interrupted while waiting (its slot passes unused)
     */
    public Decision acquire(String key) throws InterruptedException {
        return check(key, limiter.acquire(key, maxWait));
    }

    /**
     * One permit of {@code key} without blocking a thread; the stage fails with
     * {@link PermitUnavailableException} if none could be had, and a stage cancelled before its
     * slot is not sent (its slot passes unused; see {@link RateLimiter#acquireAsync}).
     */
    public CompletableFuture<Decision> acquireAsync(String key) {
        CompletableFuture<Decision> reserved = limiter.acquireAsync(key, maxWait);
        CompletableFuture<Decision> result = reserved.thenApply(decision -> check(key, decision));
        // cancelling the caller's stage cancels the reservation's: nothing is sent
        result.whenComplete((decision, failure) -> {
            if (result.isCancelled()) {
                reserved.cancel(false);
            }
        });
        return result;
    }

    private Decision check(String key, Decision decision) {
        if (!decision.allowed()) {
            throw new PermitUnavailableException(key, maxWait, decision);
        }
        return decision;
    }

    /** The limiter. */
    public RateLimiter limiter() {
        return limiter;
    }

    /** The longest a call waits for its permit. */
    public Duration maxWait() {
        return maxWait;
    }

    @Override
    public String toString() {
        return "Permits[" + limiter.name() + " waiting at most " + maxWait.toMillis() + " ms]";
    }
}
