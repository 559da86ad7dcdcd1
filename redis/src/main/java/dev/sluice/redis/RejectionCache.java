package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.TimeSource;
import dev.sluice.internal.Repeated;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A local copy of a remote store's recent rejections, in front of that store: a caller rejected
 * recently (with the same limits and cost) is rejected again here, without a round trip, until
 * its retry-after has passed or for at most {@code ttl}, whichever comes first. The copy cannot
 * see the caller's state deleted, evicted or lost in a failover, so it is trusted only briefly;
 * a {@code fresh} request skips it, and {@link #reset} clears it.
 *
 * <p>The answer of a request that reaches the store is the store's own future when it is already
 * complete, and otherwise one completed after the rejection is copied; completing it early (a
 * caller that gives up) completes the store's future too, so that a store holding requests back
 * sees it. A repeated rejection is answered as {@link Repeated}, for metrics.
 *
 * <p>The copies ({@link RejectionCopies}) are indexed by caller, so a reset or refund forgets a
 * caller's copies in one removal. A store behind that takes a {@link StorageKey} ({@link Keyed}) is
 * handed the one this cache built, so a decision, refund or reset builds it once.
 *
 * <p>Thread-safe.
 */
final class RejectionCache implements RateLimitStore {

    /**
     * A store behind the cache that takes the {@link StorageKey} the cache has already built, so
     * that a decision, refund or reset builds it once.
     */
    interface Keyed extends RateLimitStore {

        /** {@link #decide(String, List)} for the caller and limits of {@code key}. */
        CompletionStage<Decision> decide(StorageKey key);

        /** {@link #decide(String, List, long, boolean)} for the caller and limits of {@code key}. */
        CompletionStage<Decision> decide(StorageKey key, long deadlineNanos, boolean fresh);

        /** {@link #refund(String, List)} for the caller and limits of {@code key}. */
        CompletionStage<Void> refund(StorageKey key);

        /** {@link #reset(String, List)} for the caller and limits of {@code key}. */
        CompletionStage<Void> reset(StorageKey key);
    }

    private final RateLimitStore delegate;
    /** The delegate if it takes keys, else {@code null}. */
    private final Keyed keyed;
    private final TimeSource clock;
    private final RejectionCopies copies;

    /** A cache on {@link System#nanoTime()}; see {@link #RejectionCache(RateLimitStore, int, Duration, TimeSource)}. */
    public RejectionCache(RateLimitStore delegate, int maximumCallers, Duration ttl) {
        this(delegate, maximumCallers, ttl, () -> System.nanoTime() / 1_000);
    }

    /**
     * @param maximumCallers how many callers' rejections are kept, at least 1
     * @param ttl            the longest a rejection is repeated, at least 1 ms
     * @param clock          any clock in microseconds that does not go back (tests pass their own)
     * @throws IllegalArgumentException naming {@code localRejections} or {@code localRejectionTtl}
     */
    public RejectionCache(RateLimitStore delegate, int maximumCallers, Duration ttl, TimeSource clock) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.keyed = delegate instanceof Keyed k ? k : null;
        this.clock = Objects.requireNonNull(clock, "clock");
        if (maximumCallers < 1) {
            throw new IllegalArgumentException("'localRejections' must be at least 1, got '" + maximumCallers + "'");
        }
        this.copies = new RejectionCopies(maximumCallers, checkTtl(ttl), clock);
    }

    /**
     * Returns {@code ttl} if it can bound a local rejection: at least 1 ms.
     *
     * @throws IllegalArgumentException naming {@code localRejectionTtl} and the value
     */
    public static Duration checkTtl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.compareTo(Duration.ofMillis(1)) < 0) {
            throw new IllegalArgumentException("'localRejectionTtl' must be at least 1ms, got '" + ttl + "'");
        }
        return ttl;
    }

    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
        StorageKey key = StorageKey.of(caller, limits);
        Decision cached = copies.cached(key);
        if (cached != null) {
            return Repeated.of(cached);
        }
        long askedAt = clock.nowMicros();
        CompletionStage<Decision> answer = keyed != null ? keyed.decide(key) : delegate.decide(caller, limits);
        return copied(answer.toCompletableFuture(), key, askedAt);
    }

    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits, long deadlineNanos, boolean fresh) {
        StorageKey key = StorageKey.of(caller, limits);
        if (!fresh) {
            Decision cached = copies.cached(key);
            if (cached != null) {
                return Repeated.of(cached);
            }
        }
        long askedAt = clock.nowMicros();
        CompletionStage<Decision> answer = keyed != null ? keyed.decide(key, deadlineNanos, fresh)
                : delegate.decide(caller, limits, deadlineNanos, fresh);
        return copied(answer.toCompletableFuture(), key, askedAt);
    }

    /**
     * Forgets the caller's copied rejections (under any limits) before and after the store resets
     * it, so that a rejection decided meanwhile is not repeated.
     */
    @Override
    public CompletionStage<Void> reset(String caller, List<Limit> limits) {
        StorageKey key = StorageKey.of(caller, limits);
        copies.forget(key);
        CompletionStage<Void> reset = keyed != null ? keyed.reset(key) : delegate.reset(caller, limits);
        return reset.thenRun(() -> copies.forget(key));
    }

    /**
     * Refunds in the store behind, forgetting the caller's copied rejections before and after: a
     * refund can make a refused request fit again.
     */
    @Override
    public CompletionStage<Void> refund(String caller, List<Limit> limits) {
        StorageKey key = StorageKey.of(caller, limits);
        copies.forget(key);
        CompletionStage<Void> refunded = keyed != null ? keyed.refund(key) : delegate.refund(caller, limits);
        return refunded.thenRun(() -> copies.forget(key));
    }

    /** Leases are never copied: straight to the store behind. */
    @Override
    public CompletionStage<Decision> acquireLease(String caller, Limit limit, String leaseId) {
        return delegate.acquireLease(caller, limit, leaseId);
    }

    /** Straight to the store behind. */
    @Override
    public CompletionStage<Void> releaseLease(String caller, Limit limit, String leaseId) {
        return delegate.releaseLease(caller, limit, leaseId);
    }

    /** Closes the store behind. */
    @Override
    public void close() {
        delegate.close();
    }

    /** The store's answer, whose rejection is copied before the answer is given. */
    private CompletableFuture<Decision> copied(CompletableFuture<Decision> answer, StorageKey key, long askedAt) {
        if (answer.isDone()) {
            if (!answer.isCompletedExceptionally()) {
                copies.remember(key, answer.join(), askedAt);
            }
            return answer;
        }
        CompletableFuture<Decision> copied = new CompletableFuture<>();
        answer.whenComplete((decision, failure) -> {
            if (failure != null) {
                copied.completeExceptionally(failure);
            } else {
                copies.remember(key, decision, askedAt);
                copied.complete(decision);
            }
        });
        copied.whenComplete((decision, failure) -> {
            if (failure != null) {
                answer.completeExceptionally(failure); // the caller gave up: tell the store
            }
        });
        return copied;
    }
}
