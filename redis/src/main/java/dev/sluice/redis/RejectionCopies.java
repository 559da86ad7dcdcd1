package dev.sluice.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.sluice.Decision;
import dev.sluice.TimeSource;
import dev.sluice.internal.Keys;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The rejections a {@link RejectionCache} repeats: each a store's rejection of a caller under one
 * set of limits, kept until its retry-after has passed or for at most the cache's time to live,
 * and then given counted down to now.
 *
 * <p>The copies are indexed by caller (its storage tag, {@link Keys#tag}), each caller holding its
 * rejections under at most {@value #MAX_PER_CALLER} sets of limits, so a reset or refund forgets a
 * caller's copies in one removal, never a scan of every caller's. At most {@code maximumCallers}
 * callers are held, evicted on the deciding thread.
 *
 * <p>Thread-safe.
 */
final class RejectionCopies {

    /** The most sets of limits (routes, costs) one caller's rejections are copied under; the oldest go first. */
    static final int MAX_PER_CALLER = 8;

    private final TimeSource clock;
    private final long ttlMicros;
    /** Caller tag -> its copied rejections. */
    private final Cache<String, Rejection[]> rejections;

    /**
     * @param maximumCallers how many callers' rejections are kept, at least 1
     * @param ttl            the longest a rejection is repeated, at least 1 ms
     * @param clock          any clock in microseconds that does not go back
     */
    RejectionCopies(int maximumCallers, Duration ttl, TimeSource clock) {
        this.clock = clock;
        this.ttlMicros = micros(ttl);
        this.rejections = Caffeine.newBuilder()
                .maximumSize(maximumCallers)
                // Eviction on the deciding thread, as in the memory store: a pool starved of CPU
                // (a flood of callers) would otherwise let the cache outgrow its bound for a while.
                .executor(Runnable::run)
                .ticker(() -> clock.nowMicros() * 1_000)
                .expireAfter(new UntilLast())
                .build();
    }

    /** Copies {@code decision} of {@code key} if it is a rejection, of a store asked at {@code askedAtMicros}. */
    void remember(StorageKey key, Decision decision, long askedAtMicros) {
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

    /** The caller's copied rejection under these limits, its times counted down to now; {@code null} if none. */
    Decision cached(StorageKey key) {
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
                    minus(quota.reset(), elapsed), minus(quota.retryAfter(), elapsed),
                    minus(quota.nextUnit(), elapsed)));
        }
        return new Decision(Decision.Outcome.REJECTED, quotas, minus(original.retryAfter(), elapsed));
    }

    /** Forgets the caller's copies, under any limits. */
    void forget(StorageKey key) {
        rejections.invalidate(key.tag);
    }

    private static long micros(Duration d) {
        return d.getSeconds() * 1_000_000 + d.getNano() / 1_000;
    }

    private static Duration minus(Duration d, long micros) {
        return Duration.of(Math.max(0, micros(d) - micros), ChronoUnit.MICROS);
    }

    /** A rejection of {@code key}'s caller under its limits, repeated until {@code untilMicros} (the cache's clock). */
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
