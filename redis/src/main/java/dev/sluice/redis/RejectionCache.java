package dev.sluice.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.TimeSource;
import dev.sluice.internal.Keys;
import dev.sluice.internal.Repeated;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

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
 * <p>The copies are indexed by caller (its storage tag, {@link Keys#tag}), each caller holding its
 * rejections under at most eight sets of limits, so a reset or refund forgets a caller's copies in
 * one removal, never a scan of every caller's. A store behind that takes a {@link StorageKey}
 * ({@link Keyed}) is handed the one this cache built, so a decision, refund or reset builds it once.
 *
 * <p>Thread-safe.
 */
final class RejectionCache implements RateLimitStore {

    /** The most sets of limits (routes, costs) one caller's rejections are copied under; the oldest go first. */
    static final int MAX_PER_CALLER = 8;

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
    private final long ttlMicros;
    /** Caller tag -> its copied rejections. */
    private final Cache<String, Rejection[]> rejections;

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
        this.ttlMicros = micros(checkTtl(ttl));
        this.rejections = Caffeine.newBuilder()
                .maximumSize(maximumCallers)
                // Eviction on the deciding thread, as in the memory store: a pool starved of CPU
                // (a flood of callers) would otherwise let the cache outgrow its bound for a while.
                .executor(Runnable::run)
                .ticker(() -> clock.nowMicros() * 1_000)
                .expireAfter(new UntilLast())
                .build();
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
        Decision cached = cached(key);
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
            Decision cached = cached(key);
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
        forget(key);
        CompletionStage<Void> reset = keyed != null ? keyed.reset(key) : delegate.reset(caller, limits);
        return reset.thenRun(() -> forget(key));
    }

    /**
     * Refunds in the store behind, forgetting the caller's copied rejections before and after: a
     * refund can make a refused request fit again.
     */
    @Override
    public CompletionStage<Void> refund(String caller, List<Limit> limits) {
        StorageKey key = StorageKey.of(caller, limits);
        forget(key);
        CompletionStage<Void> refunded = keyed != null ? keyed.refund(key) : delegate.refund(caller, limits);
        return refunded.thenRun(() -> forget(key));
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
                remember(key, answer.join(), askedAt);
            }
            return answer;
        }
        CompletableFuture<Decision> copied = new CompletableFuture<>();
        answer.whenComplete((decision, failure) -> {
            if (failure != null) {
                copied.completeExceptionally(failure);
            } else {
                remember(key, decision, askedAt);
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

    private void remember(StorageKey key, Decision decision, long askedAtMicros) {
        if (decision.outcome() == Decision.Outcome.REJECTED && !decision.retryAfter().isZero()) {
            long retry = Math.min(micros(decision.retryAfter()), ttlMicros);
            // Counted from when the store was asked, before it decided: the local wait never
            // outlasts the store's, and never the bound on how long a copy is trusted.
            Rejection rejection = new Rejection(key, decision, askedAtMicros, askedAtMicros + retry);
            long now = clock.nowMicros();
            rejections.asMap().compute(key.tag, (t, held) -> with(held, rejection, now));
        }
    }

    /**
     * A caller's rejections with {@code added} in place of any under the same limits, without the
     * ones that have passed, and without the oldest beyond {@link #MAX_PER_CALLER}. A new array:
     * readers see one whole, never one being changed.
     */
    private static Rejection[] with(Rejection[] held, Rejection added, long now) {
        if (held == null) {
            return new Rejection[] {added};
        }
        List<Rejection> kept = new ArrayList<>(held.length + 1);
        for (Rejection r : held) {
            if (now < r.untilMicros && !r.key.sameLimits(added.key)) {
                kept.add(r);
            }
        }
        if (kept.size() >= MAX_PER_CALLER) {
            kept.subList(0, kept.size() - MAX_PER_CALLER + 1).clear();
        }
        kept.add(added);
        return kept.toArray(new Rejection[0]);
    }

    /** The caller's copied rejection under these limits, its times counted down to now; {@code null} if there is none. */
    private Decision cached(StorageKey key) {
        Rejection[] held = rejections.getIfPresent(key.tag);
        if (held == null) {
            return null;
        }
        Rejection rejection = null;
        for (Rejection r : held) {
            if (r.key.sameLimits(key)) {
                rejection = r;
                break;
            }
        }
        if (rejection == null) {
            return null;
        }
        long now = clock.nowMicros();
        if (now >= rejection.untilMicros) {
            return null;
        }
        long elapsed = Math.max(0, now - rejection.decidedAtMicros);
        Decision original = rejection.decision;
        List<Decision.Quota> quotas = new ArrayList<>(original.quotas().size());
        for (Decision.Quota quota : original.quotas()) {
            quotas.add(new Decision.Quota(quota.limit(), quota.allowed(), quota.remaining(),
                    minus(quota.reset(), elapsed), minus(quota.retryAfter(), elapsed), minus(quota.nextUnit(), elapsed)));
        }
        return new Decision(Decision.Outcome.REJECTED, quotas, minus(original.retryAfter(), elapsed));
    }

    private void forget(StorageKey key) {
        rejections.invalidate(key.tag);
    }

    private static long micros(Duration d) {
        return d.getSeconds() * 1_000_000 + d.getNano() / 1_000;
    }

    private static Duration minus(Duration d, long micros) {
        return Duration.of(Math.max(0, micros(d) - micros), ChronoUnit.MICROS);
    }

    /** A rejection of {@code key}'s caller under its limits, repeated until {@code untilMicros}, on this cache's clock. */
    private record Rejection(StorageKey key, Decision decision, long decidedAtMicros, long untilMicros) {
    }

    /** A caller's copies expire when the last of them has passed (the ticker is this cache's clock, in nanoseconds). */
    private static final class UntilLast implements Expiry<String, Rejection[]> {

        @Override
        public long expireAfterCreate(String tag, Rejection[] held, long nowNanos) {
            long until = Long.MIN_VALUE;
            for (Rejection r : held) {
                until = Math.max(until, r.untilMicros);
            }
            return Math.max(1, TimeUnit.MICROSECONDS.toNanos(until) - nowNanos);
        }

        @Override
        public long expireAfterUpdate(String tag, Rejection[] held, long nowNanos, long currentDuration) {
            return expireAfterCreate(tag, held, nowNanos);
        }

        @Override
        public long expireAfterRead(String tag, Rejection[] held, long nowNanos, long currentDuration) {
            return currentDuration;
        }
    }
}
