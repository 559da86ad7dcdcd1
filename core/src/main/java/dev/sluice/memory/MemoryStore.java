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
import dev.sluice.internal.Keys;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
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

    /** How often a decision re-reads a caller that another decision was writing before taking its lock. */
    private static final int OPTIMISTIC_ATTEMPTS = 64;
    /** {@link Caller#tryDecide}'s answer when a write intervened: read again. Compared by identity. */
    static final Decision CONFLICT = new Decision(Decision.Outcome.FAILED_CLOSED, List.of(), Duration.ZERO);

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
        // A known caller whose state already says no is refused from an optimistic read: no lock,
        // no write, not even the cache's access bookkeeping (a refusal changes no state, so it
        // need not keep the caller longer). An allowed request commits under the lock only if
        // nothing changed since that read.
        Caller known = callers.policy().getIfPresentQuietly(tag);
        // Another decision of this caller committing meanwhile is a conflict, not a reason to
        // park on the lock: its commit is a few dozen nanoseconds, so read again (as a CAS loop
        // would), a bounded number of times.
        for (int attempt = 0; known != null && attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
            Decision decision = known.tryDecide(time, limits, callers, tag);
            if (decision != CONFLICT) {
                if (decision != null) {
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

    /** Gives back one request's spending under these limits, under the caller's lock; see {@link RateLimitStore#refund}. */
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
