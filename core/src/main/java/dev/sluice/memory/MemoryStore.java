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
import java.util.concurrent.locks.StampedLock;
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

    /** How often a decision re-reads a caller that another decision was writing before taking its lock. */
    private static final int OPTIMISTIC_ATTEMPTS = 64;
    /** {@link Caller#tryDecide}'s answer when a write intervened: read again. Compared by identity. */
    private static final Decision CONFLICT = new Decision(Decision.Outcome.FAILED_CLOSED, List.of(), Duration.ZERO);

    private final TimeSource time;
    private final Cache<String, Caller> callers;
    /** Runs between reading a caller and locking it, with its tag: for tests of that window only. */
    volatile Consumer<String> beforeLock;

    private MemoryStore(Builder builder) {
        this.time = builder.time;
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
        // A known caller whose state already says no is refused from an optimistic read: no lock,
        // no write, not even the cache's access bookkeeping (a refusal changes no state, so it
        // need not keep the caller longer). An allowed request commits under the lock only if
        // nothing changed since that read.
        Caller known = callers.policy().getIfPresentQuietly(tag);
        // Another decision of this caller committing meanwhile is a conflict, not a reason to
        // park on the lock: its commit is a few dozen nanoseconds, so read again (as a CAS loop
        // would), a bounded number of times.
        for (int attempt = 0; known != null && attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
            Decision decision = known.tryDecide(time, limits);
            if (decision != CONFLICT) {
                if (decision != null) {
                    if (decision.allowed()) {
                        // A commit restarts the time the caller's state needs: so must its entry's
                        // idle expiry (a read does that). Outside the lock: maintenance may retire a caller.
                        callers.getIfPresent(tag);
                    }
                    return CompletableFuture.completedFuture(decision);
                }
                break;
            }
            Thread.onSpinWait();
        }
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
            long stamp = state.lock.writeLock();
            try {
                // Evicted since it was read: deciding on it would charge a caller nobody else sees.
                if (!state.retired) {
                    longer = state.lengthenIdle(limits);
                    decision = state.decide(time.nowMicros(), limits);
                }
            } finally {
                state.lock.unlockWrite(stamp);
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
            long stamp = state.lock.writeLock();
            try {
                state.forget(limits);
            } finally {
                state.lock.unlockWrite(stamp);
            }
        }
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
        // One allocation (none for zero) where Duration.of(value, MICROS) makes several.
        return value == 0 ? Duration.ZERO
                : Math.abs(value) < Long.MAX_VALUE / 1_000 ? Duration.ofNanos(value * 1_000)
                : Duration.of(value, ChronoUnit.MICROS);
    }

    /**
     * One caller's states, one per (policy, algorithm) like the Redis keys. Written under the
     * write lock of {@link #lock}; read without it only optimistically ({@link #tryDecide}), where
     * a torn read is detected by the lock's stamp and then discarded. {@link #idleNanos} is read by
     * the cache without it.
     */
    private static final class Caller {
        final StampedLock lock = new StampedLock();
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

        void retire() {
            long stamp = lock.writeLock();
            retired = true;
            lock.unlockWrite(stamp);
        }

        /**
         * Decides from an optimistic read; returns {@link #CONFLICT} when a write intervened (the
         * read was torn or went stale, or another decision committed first), or {@code null} for
         * the locked path: the caller was retired, a limit is new to it, or its state is absent
         * or expired (the locked path normalises those). A refusal returned here was computed from the state as it stood
         * at one instant (the stamp proves no write intervened) and wrote nothing; the racy read
         * can only send a request to the lock, never admit one the lock would refuse.
         */
        Decision tryDecide(TimeSource time, List<Limit> limits) {
            long stamp = lock.tryOptimisticRead();
            if (stamp == 0) {
                return CONFLICT;
            }
            if (retired || limits != covered) {
                return lock.validate(stamp) ? null : CONFLICT;
            }
            int n = limits.size();
            LimitState[] chosen = new LimitState[n];
            Verdict[] seen = new Verdict[n];
            long now;
            boolean all = true;
            try {
                now = time.nowMicros();
                for (int i = 0; i < n; i++) {
                    Limit limit = limits.get(i);
                    int found = -1;
                    Limit[] k = keys;
                    for (int j = 0; j < size && found < 0; j++) {
                        if (k[j] == limit) {
                            found = j;
                        }
                    }
                    LimitState s = found < 0 ? null : states[found];
                    if (s == null || s.isAbsent() || s.expiresAtMicros <= now) {
                        return lock.validate(stamp) ? null : CONFLICT;
                    }
                    chosen[i] = s;
                    seen[i] = new Verdict();
                    s.evaluate(now, limit.cost(), false, seen[i]);
                    all &= seen[i].fits;
                }
            } catch (RuntimeException torn) {
                return CONFLICT; // read while a writer moved things (an array grown, a ring wrapped)
            }
            if (!all) {
                // Validated before the verdicts are used: a torn read's numbers never reach a decision.
                return lock.validate(stamp) ? decision(false, limits, seen) : CONFLICT;
            }
            long write = lock.tryConvertToWriteLock(stamp);
            if (write == 0) {
                return CONFLICT;
            }
            try {
                // Nothing changed since the read: commit what it found to fit.
                for (int i = 0; i < n; i++) {
                    chosen[i].evaluate(now, limits.get(i).cost(), true, seen[i]);
                    chosen[i].expiresAtMicros = now + seen[i].ttlMicros;
                }
            } finally {
                lock.unlockWrite(write);
            }
            return decision(true, limits, seen);
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
            if (n == 1) {
                // One limit: evaluating with commit consumes only if it fits, as the two passes would.
                LimitState only = state(limits.get(0), now);
                only.evaluate(now, limits.get(0).cost(), true, verdicts[0]);
                if (verdicts[0].fits) {
                    only.expiresAtMicros = now + verdicts[0].ttlMicros;
                }
                return decision(verdicts[0].fits, limits, verdicts);
            }
            LimitState[] chosen = new LimitState[n];
            boolean all = true;
            for (int i = 0; i < n; i++) {
                chosen[i] = state(limits.get(i), now);
                chosen[i].evaluate(now, limits.get(i).cost(), false, verdicts[i]);
                all &= verdicts[i].fits;
            }
            if (all) {
                for (int i = 0; i < n; i++) {
                    chosen[i].evaluate(now, limits.get(i).cost(), true, verdicts[i]);
                    chosen[i].expiresAtMicros = now + verdicts[i].ttlMicros;
                }
            }
            return decision(all, limits, verdicts);
        }

        /** The decision these verdicts make, one quota per limit. */
        private static Decision decision(boolean all, List<Limit> limits, Verdict[] verdicts) {
            int n = limits.size();
            Decision.Quota[] quotas = new Decision.Quota[n];
            long retry = 0;
            for (int i = 0; i < n; i++) {
                Verdict v = verdicts[i];
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
