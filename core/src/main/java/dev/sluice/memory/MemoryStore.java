package dev.sluice.memory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimitStore;
import dev.sluice.TimeSource;
import dev.sluice.internal.Keys;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Keeps counting state in this JVM: the embedded default, for a single node.
 *
 * <p>State is grouped per caller in a bounded Caffeine cache: each caller's decision runs inside
 * the cache's per-key atomic {@code compute}, so decisions for one caller are serialised, all of
 * its limits are decided together, and no lock is shared between callers. A caller's entry
 * expires once every limit has fully restored its budget (so expiry never changes a decision),
 * and at most {@link Builder#maximumCallers(long) maximumCallers} entries are kept: a flood of
 * distinct callers evicts the least valuable entries instead of exhausting the heap (an evicted
 * caller starts again with a full budget).
 *
 * <pre>{@code
 * RateLimitStore store = MemoryStore.builder().maximumCallers(50_000).build();
 * }</pre>
 *
 * <p>Decisions complete synchronously and never fail. Thread-safe.
 */
public final class MemoryStore implements RateLimitStore {

    /** The default bound on callers held. */
    public static final long DEFAULT_MAXIMUM_CALLERS = 100_000;

    private final TimeSource time;
    private final Cache<String, Caller> callers;

    private MemoryStore(Builder builder) {
        this.time = builder.time;
        this.callers = Caffeine.newBuilder()
                .maximumSize(builder.maximumCallers)
                .ticker(() -> saturatedNanos(time.nowMicros()))
                .expireAfter(new Expiry<String, Caller>() {
                    @Override
                    public long expireAfterCreate(String key, Caller caller, long currentTime) {
                        return caller.ttlNanos;
                    }

                    @Override
                    public long expireAfterUpdate(String key, Caller caller, long currentTime, long currentDuration) {
                        return caller.ttlNanos;
                    }

                    @Override
                    public long expireAfterRead(String key, Caller caller, long currentTime, long currentDuration) {
                        return currentDuration;
                    }
                })
                .build();
    }

    /** A store with the defaults: the system clock, at most {@value #DEFAULT_MAXIMUM_CALLERS} callers. */
    public static MemoryStore create() {
        return builder().build();
    }

    /** A builder for a store with other bounds or another clock. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
        Decision[] answer = new Decision[1];
        callers.asMap().compute(Keys.tag(caller), (tag, state) -> {
            Caller current = state != null ? state : new Caller();
            answer[0] = current.decide(time.nowMicros(), limits);
            return current.states.isEmpty() ? null : current;
        });
        return CompletableFuture.completedFuture(answer[0]);
    }

    /** The number of callers currently held (approximate, for tests and monitoring). */
    public long callerCount() {
        callers.cleanUp();
        return callers.estimatedSize();
    }

    /** Drops all state. */
    @Override
    public void close() {
        callers.invalidateAll();
    }

    private static long saturatedNanos(long micros) {
        return micros > Long.MAX_VALUE / 1_000 ? Long.MAX_VALUE : micros * 1_000;
    }

    static Duration micros(long value) {
        return Duration.of(value, ChronoUnit.MICROS);
    }

    /** One caller's states, keyed {@code policy:suffix} like the Redis keys; guarded by compute. */
    private static final class Caller {
        final Map<String, LimitState> states = new HashMap<>(4);
        long ttlNanos;

        Decision decide(long now, List<Limit> limits) {
            int n = limits.size();
            LimitState[] chosen = new LimitState[n];
            Verdict[] verdicts = new Verdict[n];
            boolean all = true;
            for (int i = 0; i < n; i++) {
                Limit limit = limits.get(i);
                String name = limit.policy() + ":" + limit.algorithm().keySuffix();
                LimitState state = states.get(name);
                if (state == null || state.expiresAtMicros <= now) {
                    state = LimitState.absent(limit); // an expired state is an absent key
                    states.put(name, state);
                }
                chosen[i] = state;
                verdicts[i] = new Verdict();
                state.evaluate(now, limit.cost(), false, verdicts[i]);
                all &= verdicts[i].fits;
            }
            List<Decision.Quota> quotas = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                Verdict v = verdicts[i];
                if (all) {
                    chosen[i].evaluate(now, limits.get(i).cost(), true, v);
                    chosen[i].expiresAtMicros = now + v.ttlMicros;
                }
                quotas.add(new Decision.Quota(limits.get(i), v.fits, v.remaining, micros(v.resetMicros),
                        micros(v.retryMicros)));
            }
            long latest = now;
            var it = states.values().iterator();
            while (it.hasNext()) {
                LimitState state = it.next();
                if (state.isAbsent() || state.expiresAtMicros <= now) {
                    it.remove();
                } else {
                    latest = Math.max(latest, state.expiresAtMicros);
                }
            }
            ttlNanos = saturatedNanos(latest - now);
            Duration retry = Duration.ZERO;
            if (!all) {
                for (Decision.Quota quota : quotas) {
                    retry = quota.retryAfter().compareTo(retry) > 0 ? quota.retryAfter() : retry;
                }
            }
            return new Decision(all ? Decision.Outcome.ALLOWED : Decision.Outcome.REJECTED, quotas, retry);
        }
    }

    /** Settings of a {@link MemoryStore}. */
    public static final class Builder {
        private long maximumCallers = DEFAULT_MAXIMUM_CALLERS;
        private TimeSource time = TimeSource.SYSTEM;

        private Builder() {
        }

        /** The most callers kept; beyond it the least valuable are evicted. Default 100,000. */
        public Builder maximumCallers(long maximumCallers) {
            if (maximumCallers < 1) {
                throw new IllegalArgumentException("'maximumCallers' must be at least 1, got '" + maximumCallers + "'");
            }
            this.maximumCallers = maximumCallers;
            return this;
        }

        /** The clock; default {@link TimeSource#SYSTEM}. Inject one to test without sleeping. */
        public Builder timeSource(TimeSource time) {
            this.time = java.util.Objects.requireNonNull(time, "time");
            return this;
        }

        /** Builds the store. */
        public MemoryStore build() {
            return new MemoryStore(this);
        }
    }
}
