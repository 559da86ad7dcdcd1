package dev.sluice.memory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Ticker;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimitStore;
import dev.sluice.TimeSource;
import dev.sluice.internal.store.CompiledLimit;
import dev.sluice.internal.Keys;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Keeps counting state in this JVM: the embedded default, for a single node.
 *
 * <p>State is grouped per caller in a bounded Caffeine cache: each caller's decision runs under
 * that caller's own lock, so decisions for one caller are serialised, all of its limits are
 * decided together, and no lock is shared between callers. A caller's entry expires once it has
 * been idle for longer than its limits can need to restore their budget (so expiry never changes
 * a decision),
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
    /** Concurrency leases, apart from the rate states: another lifetime (the lease), another lock. */
    private final LeaseTable leases;
    /** Runs between reading a caller and locking it, with its tag: for tests of that window only. */
    volatile Consumer<String> beforeLock;

    private MemoryStore(Builder builder) {
        this.time = builder.time;
        this.leases = new LeaseTable(time, builder.maximumCallers);
        this.callers = Caffeine.newBuilder()
                .maximumSize(builder.maximumCallers)
                // Expiry needs durations only: the JVM's cheap monotonic clock serves unless a clock is injected.
                .ticker(time == TimeSource.SYSTEM ? Ticker.systemTicker() : () -> saturatedNanos(time.nowMicros()))
                // Maintenance runs on the deciding thread: no pool threads to start (or to pin an
                // application's class loader), and eviction keeps pace with a flood of callers.
                .executor(Runnable::run)
                // Runs atomically with the removal: a request that read this caller just before
                // and locks it after finds it retired, and reads the cache again.
                .evictionListener((String key, Caller caller, RemovalCause cause) -> {
                    if (caller != null) {
                        caller.retire();
                    }
                })
                // A caller idle for longer than its longest possible TTL holds only states equal to
                // absent ones, so expiring it then never changes a decision. Reads refresh it, so a
                // decision is a cheap read, not a write, for the cache.
                .expireAfter(new Expiry<String, Caller>() {
                    @Override
                    public long expireAfterCreate(String key, Caller caller, long currentTime) {
                        return caller.idleNanos;
                    }

                    @Override
                    public long expireAfterUpdate(String key, Caller caller, long currentTime, long currentDuration) {
                        return caller.idleNanos;
                    }

                    @Override
                    public long expireAfterRead(String key, Caller caller, long currentTime, long currentDuration) {
                        return caller.idleNanos;
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
        String tag = Keys.tag(caller);
        Caller state;
        Decision decision = null;
        boolean longer = false;
        do {
            state = callers.get(tag, key -> new Caller(limits));
            Consumer<String> hook = beforeLock;
            if (hook != null) {
                hook.accept(tag);
            }
            // One lock per caller: decisions for one caller are serialised, others never wait.
            synchronized (state) {
                // Evicted since it was read: deciding on it would charge a caller nobody else sees.
                if (!state.retired) {
                    longer = state.lengthenIdle(limits);
                    decision = state.decide(time.nowMicros(), limits);
                }
            }
        } while (decision == null);
        if (longer) {
            // A limiter with a longer memory now uses this caller: keep it at least that long.
            long idle = state.idleNanos;
            callers.policy().expireVariably().ifPresent(p -> p.setExpiresAfter(tag, idle, TimeUnit.NANOSECONDS));
        }
        return CompletableFuture.completedFuture(decision);
    }

    /** Forgets the caller's state under these limits: its next request finds them absent. */
    @Override
    public CompletionStage<Void> reset(String caller, List<Limit> limits) {
        Caller state = callers.getIfPresent(Keys.tag(caller));
        if (state != null) {
            synchronized (state) {
                state.forget(limits);
            }
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Gives back one request's spending under these limits, under the caller's lock; see {@link RateLimitStore#refund}. */
    @Override
    public CompletionStage<Void> refund(String caller, List<Limit> limits) {
        Caller state = callers.getIfPresent(Keys.tag(caller));
        if (state != null) {
            synchronized (state) {
                if (!state.retired) {
                    state.refund(time.nowMicros(), limits);
                }
            }
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Takes a concurrency lease; see {@link RateLimitStore#acquireLease}. */
    @Override
    public CompletionStage<Decision> acquireLease(String caller, Limit limit, String leaseId) {
        return CompletableFuture.completedFuture(leases.acquire(Keys.tag(caller), limit, leaseId));
    }

    /** Returns a concurrency lease; see {@link RateLimitStore#releaseLease}. */
    @Override
    public CompletionStage<Void> releaseLease(String caller, Limit limit, String leaseId) {
        leases.release(Keys.tag(caller), limit, leaseId);
        return CompletableFuture.completedFuture(null);
    }

    /** The number of callers currently held (approximate, for tests and monitoring). */
    public long callerCount() {
        callers.cleanUp();
        return callers.estimatedSize();
    }

    /** Whether this store holds a caller, without touching its entry (for tests). */
    boolean holds(String caller) {
        return callers.policy().getIfPresentQuietly(Keys.tag(caller)) != null;
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

    /**
     * One caller's states, one per (policy, algorithm) like the Redis keys. Guarded by its own
     * monitor; {@link #idleNanos} is read by the cache without it.
     */
    private static final class Caller {
        private Limit[] keys = new Limit[2];
        /** The compiled form of each of {@link #keys}. */
        private CompiledLimit[] compiled = new CompiledLimit[2];
        private LimitState[] states = new LimitState[2];
        private Verdict[] verdicts = {new Verdict(), new Verdict()};
        private int size;
        /** The limits {@link #idleNanos} last covered: a limiter passes the same list every time. */
        private List<Limit> covered;
        /** Evicted from the cache: no longer the caller's state. */
        private boolean retired;
        volatile long idleNanos;

        Caller(List<Limit> limits) {
            lengthenIdle(limits);
        }

        synchronized void retire() {
            retired = true;
        }

        /** Raises {@link #idleNanos} to the longest TTL these limits can need; whether it rose. */
        boolean lengthenIdle(List<Limit> limits) {
            if (limits == covered) {
                return false;
            }
            long longest = idleNanos;
            for (int i = 0; i < limits.size(); i++) {
                longest = Math.max(longest, CompiledLimit.of(limits.get(i)).longestTtlNanos());
            }
            covered = limits;
            if (longest > idleNanos) {
                idleNanos = longest;
                return true;
            }
            return false;
        }

        /**
         * The state of a limit's (policy, algorithm), the same instance as last time found first;
         * a limit with other parameters reads the same stored values under its own (see
         * {@link LimitState#under}), as a Redis key is read by a changed limit.
         */
        private LimitState state(Limit limit, long now) {
            int found = -1;
            for (int i = 0; i < size && found < 0; i++) {
                if (keys[i] == limit) {
                    found = i;
                }
            }
            for (int i = 0; i < size && found < 0; i++) {
                if (keys[i].algorithm() == limit.algorithm() && keys[i].policy().equals(limit.policy())) {
                    CompiledLimit other = CompiledLimit.of(limit);
                    if (!compiled[i].sameParameters(other)) {
                        states[i] = states[i].under(other);
                    }
                    keys[i] = limit;
                    compiled[i] = other;
                    found = i;
                }
            }
            if (found < 0) {
                if (size == keys.length) {
                    keys = Arrays.copyOf(keys, size * 2);
                    compiled = Arrays.copyOf(compiled, size * 2);
                    states = Arrays.copyOf(states, size * 2);
                }
                found = size++;
                keys[found] = limit;
                compiled[found] = CompiledLimit.of(limit);
                states[found] = LimitState.absent(compiled[found]);
            } else if (!states[found].isAbsent() && states[found].expiresAtMicros <= now) {
                states[found] = LimitState.absent(compiled[found]); // an expired state is an absent key
            }
            return states[found];
        }

        /** Gives back one request's cost under each of these limits (see {@link LimitState#refund}). */
        void refund(long now, List<Limit> limits) {
            for (Limit limit : limits) {
                state(limit, now).refund(now, limit.cost());
            }
        }

        /** Makes the states of these limits' (policy, algorithm) absent. */
        void forget(List<Limit> limits) {
            for (Limit limit : limits) {
                for (int i = 0; i < size; i++) {
                    if (keys[i].algorithm() == limit.algorithm() && keys[i].policy().equals(limit.policy())) {
                        keys[i] = limit;
                        compiled[i] = CompiledLimit.of(limit);
                        states[i] = LimitState.absent(compiled[i]);
                    }
                }
            }
        }

        Decision decide(long now, List<Limit> limits) {
            int n = limits.size();
            if (verdicts.length < n) {
                verdicts = new Verdict[n];
                for (int i = 0; i < n; i++) {
                    verdicts[i] = new Verdict();
                }
            }
            LimitState[] chosen = new LimitState[n];
            boolean all = true;
            for (int i = 0; i < n; i++) {
                chosen[i] = state(limits.get(i), now);
                chosen[i].evaluate(now, limits.get(i).cost(), false, verdicts[i]);
                all &= verdicts[i].fits;
            }
            Decision.Quota[] quotas = new Decision.Quota[n];
            long retry = 0;
            for (int i = 0; i < n; i++) {
                Verdict v = verdicts[i];
                if (all) {
                    chosen[i].evaluate(now, limits.get(i).cost(), true, v);
                    chosen[i].expiresAtMicros = now + v.ttlMicros;
                }
                quotas[i] = new Decision.Quota(limits.get(i), v.fits, v.remaining, micros(v.resetMicros),
                        micros(v.retryMicros), micros(v.nextMicros));
                retry = Math.max(retry, v.retryMicros);
            }
            return all
                    ? new Decision(Decision.Outcome.ALLOWED, List.of(quotas), Duration.ZERO)
                    : new Decision(Decision.Outcome.REJECTED, List.of(quotas), micros(retry));
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
