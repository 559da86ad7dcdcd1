package dev.sluice.memory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.ImmediateStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.RateLimitStore.Booking;
import dev.sluice.TimeSource;
import dev.sluice.internal.Keys;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * Keeps counting state in this JVM: the embedded default, for a single node.
 *
 * <p>State is grouped per caller in a bounded Caffeine cache: each caller's decision runs under
 * that caller's own lock, so decisions for one caller are serialised, all of its limits are
 * decided together, and no lock is shared between callers. A caller whose every state has
 * expired by the store's clock (each state expires when it has become equal to an absent one,
 * so dropping it never changes a decision) is dropped when the store next adds callers (up to
 * an eighth of its longest expiry later: admissions in a row then seldom write its idle time),
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
public final class MemoryStore implements ImmediateStore {

    /** The default bound on callers held. */
    public static final long DEFAULT_MAXIMUM_CALLERS = 100_000;

    /** How often a decision re-reads a caller that another decision was writing before taking its lock. */
    private static final int OPTIMISTIC_ATTEMPTS = 64;
    /** {@link Caller#tryDecide}'s answer when a write intervened: read again. Compared by identity. */
    static final Decision CONFLICT = new Decision(Decision.Outcome.FAILED_CLOSED, List.of(), Duration.ZERO);

    private final TimeSource time;
    private final Cache<String, Caller> callers;
    /** Drops callers whose every state has expired, a few each time the locked path runs. */
    private final IdleSweeper sweeper;
    /** Concurrency leases, apart from the rate states: another lifetime (the lease), another lock. */
    private final LeaseTable leases;
    /** Limit overrides, by policy: this JVM's only, as the state is. */
    private final java.util.Map<String, String> overrides = new java.util.concurrent.ConcurrentHashMap<>();
    /** Runs between reading a caller and locking it, with its tag: for tests of that window only. */
    volatile Consumer<String> beforeLock;

    private MemoryStore(Builder builder) {
        this.time = builder.time == TimeSource.SYSTEM ? WallClock.INSTANCE : builder.time;
        this.leases = new LeaseTable(time, builder.maximumCallers);
        // Bounded by size only: Caffeine's own expiry would read a clock at every lookup, on top
        // of the store's. Idle callers go by the store's clock instead (IdleSweeper).
        this.callers = Caffeine.newBuilder()
                .maximumSize(builder.maximumCallers)
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
                .build();
        this.sweeper = new IdleSweeper(callers.asMap());
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
        return CompletableFuture.completedFuture(decideNow(caller, limits));
    }

    /** Decides on this thread, as {@link #decide(String, List)} does; a limiter on this store calls it directly. */
    @Override
    public Decision decideNow(String caller, List<Limit> limits) {
        String tag = Keys.tag(caller);
        // A known caller whose state already says no is refused from an optimistic read: no lock,
        // no write, not even the cache's access bookkeeping (a refusal changes no state, so it
        // need not keep the caller longer). An allowed request commits under the lock only if
        // nothing changed since that read.
        Caller known = callers.policy().getIfPresentQuietly(tag);
        // Another decision of this caller committing meanwhile is a conflict, not a reason to
        // park on the lock: its commit is a few dozen nanoseconds, so read again (as a CAS loop
        // would), a bounded number of times. The clock is read once, before the optimistic read,
        // so that the read's window (a write in it is a conflict) stays short and a retry costs
        // no second reading; a state committed meanwhile at a later time is decided as of that
        // time, which grants nothing extra.
        long at = known == null ? 0 : time.nowMicros();
        for (int attempt = 0; known != null && attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
            Decision decision = known.tryDecide(at, limits, callers, tag);
            if (decision != CONFLICT) {
                if (decision != null) {
                    return decision;
                }
                break;
            }
            Thread.onSpinWait();
        }
        Caller state;
        Decision decision = null;
        long now = 0;
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
                    state.lengthenIdle(limits);
                    now = time.nowMicros();
                    decision = state.decide(now, limits);
                }
            } finally {
                state.lock.unlockWrite(stamp);
            }
        } while (decision == null);
        // The locked path is where callers are added: it also drops a few idle ones, so that
        // callers come and go at the same pace. Outside the caller's lock, like eviction.
        sweeper.sweep(now, IdleSweeper.PER_LOCKED_DECISION);
        return decision;
    }

    /** Forgets the caller's state under these limits: its next request finds them absent. */
    /** The overrides this JVM's applications set on this store: this JVM only. */
    @Override
    public CompletionStage<java.util.Map<String, String>> overrides() {
        return CompletableFuture.completedFuture(java.util.Map.copyOf(overrides));
    }

    @Override
    public CompletionStage<Void> putOverride(String policy, String value) {
        if (value == null) {
            overrides.remove(policy);
        } else {
            overrides.put(policy, value);
        }
        return CompletableFuture.completedFuture(null);
    }

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

    /**
     * Gives back one request's spending under these limits, under the caller's lock; see {@link RateLimitStore#refund}.
     */
    @Override
    public CompletionStage<Void> refund(String caller, List<Limit> limits) {
        Caller state = callers.getIfPresent(Keys.tag(caller));
        if (state != null) {
            // A refund writes: the write lock, never the optimistic read (whose stamp it invalidates).
            long stamp = state.lock.writeLock();
            try {
                if (!state.retired) {
                    state.refund(time.nowMicros(), limits);
                }
            } finally {
                state.lock.unlockWrite(stamp);
            }
        }
        return CompletableFuture.completedFuture(null);
    }

    /** Pauses the caller's limits under its lock; see {@link RateLimitStore#pause}. */
    @Override
    public CompletionStage<Void> pause(String caller, List<Limit> limits, Duration pause) {
        long micros = RateLimitStore.checkPause(pause);
        underLock(caller, limits, (state, now) -> {
            state.pause(now, limits, now + micros);
            return Boolean.TRUE;
        });
        return CompletableFuture.completedFuture(null);
    }

    /** Reserves one request under the caller's lock; see {@link RateLimitStore#reserve}. */
    @Override
    public CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
        long wait = maxWait.toNanos() / 1_000;
        return CompletableFuture.completedFuture(underLock(caller, limits,
                (state, now) -> Reservation.reserve(state, now, limits, wait, null)));
    }

    /** Reserves as {@link #reserve} does, telling where each limit's schedule ends; see {@link RateLimitStore#book}. */
    @Override
    public CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
        long wait = maxWait.toNanos() / 1_000;
        long[] ends = new long[3 * limits.size()];
        Decision decision = underLock(caller, limits,
                (state, now) -> Reservation.reserve(state, now, limits, wait, ends));
        return CompletableFuture.completedFuture(new Booking(decision,
                decision.outcome() == Decision.Outcome.ALLOWED ? ends : Booking.NOWHERE));
    }

    /** Returns a reservation given up by its waiter, under the caller's lock; see {@link RateLimitStore#giveBack}. */
    @Override
    public CompletionStage<Void> giveBack(String caller, List<Limit> limits, Booking booking) {
        Caller state = callers.getIfPresent(Keys.tag(caller));
        if (state != null && booking.ends().length == 3 * limits.size()) {
            long stamp = state.lock.writeLock();
            try {
                if (!state.retired) {
                    state.giveBack(time.nowMicros(), limits, booking.ends());
                }
            } finally {
                state.lock.unlockWrite(stamp);
            }
        }
        return CompletableFuture.completedFuture(null);
    }

    /** What {@link #underLock} runs on a caller's state, under its write lock, at {@code now}. */
    private interface LockedOperation<T> {
        T apply(Caller state, long now);
    }

    /**
     * Runs {@code operation} on {@code caller}'s state under its write lock, with the clock read
     * under the lock; a state the sweeper retired meanwhile is left and a fresh one taken. Then
     * sweeps, as a decision does. Not the decision's own path, which avoids the lambda.
     */
    private <T> T underLock(String caller, List<Limit> limits, LockedOperation<T> operation) {
        String tag = Keys.tag(caller);
        T result = null;
        long now = 0;
        do {
            Caller state = callers.get(tag, key -> new Caller(limits));
            long stamp = state.lock.writeLock();
            try {
                if (!state.retired) {
                    state.lengthenIdle(limits);
                    now = time.nowMicros();
                    result = operation.apply(state, now);
                }
            } finally {
                state.lock.unlockWrite(stamp);
            }
        } while (result == null);
        sweeper.sweep(now, IdleSweeper.PER_LOCKED_DECISION);
        return result;
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

    static Duration micros(long value) {
        // One allocation (none for zero) where Duration.of(value, MICROS) makes several.
        return value == 0 ? Duration.ZERO
                : Math.abs(value) < Long.MAX_VALUE / 1_000 ? Duration.ofNanos(value * 1_000)
                : Duration.of(value, ChronoUnit.MICROS);
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

        /**
         * The clock; default {@link TimeSource#SYSTEM} (read through {@code System.nanoTime}, kept
         * within a second of every step of the system clock). Inject one to test without sleeping.
         */
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
