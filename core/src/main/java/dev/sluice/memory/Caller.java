package dev.sluice.memory;

import com.github.benmanes.caffeine.cache.Cache;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.CompiledLimit;
import dev.sluice.spi.algorithm.RateAlgorithm;
import dev.sluice.spi.algorithm.Verdict;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.StampedLock;

import static dev.sluice.memory.MemoryStore.CONFLICT;

/**
 * One caller: the decisions on its states ({@link StateTable}), each written in place by its
 * {@link RateAlgorithm}, and how long it stays. Written under the write lock of {@link #lock};
 * read without it only optimistically ({@link #tryDecide}), where a torn read is detected by the
 * lock's stamp and then discarded. {@link #idleNanos} is read by the cache without it. Reservations:
 * {@link Reservation}.
 */
final class Caller extends StateTable {
    /**
     * Each thread's verdict for a refusal under one limit made from an optimistic read: a refusal
     * allocates only the decision it returns.
     */
    private static final ThreadLocal<Verdict> READ = ThreadLocal.withInitial(Verdict::new);

    final StampedLock lock = new StampedLock();
    /**
     * The last admission under one limit that found its budget whole, given again to such an
     * admission whose numbers are the same, as they are at every admission of a caller whose
     * bucket is whole again when it comes (a caller under its rate, the common case): that
     * admission allocates nothing. Read and written without the lock: it is immutable, and any one
     * a thread sees is right when its numbers match. Written only when a whole budget's admission
     * differs from it: a young object stored into this long-lived one at every admission would
     * cost the collector's write barrier more than the memo saves.
     */
    private Decision admitted;
    /**
     * The reset and the next unit of the last admission under one limit and their microseconds,
     * given again to an admission with the same (see {@link #resetOf}). Under the write lock only.
     */
    private Duration admittedReset;
    private long admittedResetMicros;
    private Duration admittedNext;
    private long admittedNextMicros;
    private Verdict[] verdicts = {new Verdict(), new Verdict()};
    /** The limits {@link #idleNanos} last covered: a limiter passes the same list every time. */
    private List<Limit> covered;
    /** Evicted from the cache: no longer the caller's state. */
    boolean retired;
    /** When (store time) this caller's cache entry was last read for the eviction policy's sake. */
    long refreshedMicros;
    /** The longest time a state of the covered limits can stay different from an absent one. */
    private long idleNanos;
    /**
     * When (store time) every state of this caller has expired: at least the latest expiry written
     * (an admission adds some slack). Written under the lock; read without it only as a hint
     * ({@link #retireIfIdle} reads it again).
     */
    private long idleAfterMicros;

    Caller(List<Limit> limits) {
        lengthenIdle(limits);
    }

    void retire() {
        long stamp = lock.writeLock();
        retired = true;
        lock.unlockWrite(stamp);
    }

    /** Whether every state had expired at {@code now}, as far as an unlocked read can tell. */
    boolean idleAt(long now) {
        return idleAfterMicros <= now;
    }

    /** Retires this caller if every state has expired at {@code now}; whether it is retired. */
    boolean retireIfIdle(long now) {
        long stamp = lock.writeLock();
        try {
            if (idleAfterMicros <= now) {
                retired = true;
            }
            return retired;
        } finally {
            lock.unlockWrite(stamp);
        }
    }

    /**
     * Decides from an optimistic read; returns {@link MemoryStore#CONFLICT} when a write intervened
     * (the read was torn or went stale, or another decision committed first), or {@code null} for
     * the locked path: the caller was retired or a limit is new to it (the locked path lengthens
     * the caller's idle time). An absent or expired state is read as its slot's absent one and, if
     * the request is admitted, reset to it in place under the lock. A refusal returned here was
     * computed from the state as it stood at one instant (the stamp proves no write intervened)
     * and wrote nothing; the racy read can only send a request to the lock, never admit one the
     * lock would refuse.
     */
    Decision tryDecide(long now, List<Limit> limits, Cache<String, Caller> cache, String tag) {
        long stamp = lock.tryOptimisticRead();
        if (stamp == 0) {
            return CONFLICT;
        }
        if (retired || limits != covered) {
            return lock.validate(stamp) ? null : CONFLICT;
        }
        int n = limits.size();
        boolean all = true;
        Decision refusal = null;
        try {
            // First only whether each limit fits: an admission then computes its verdicts once,
            // from the state it commits.
            for (int i = 0; i < n && all; i++) {
                int slot = slot(limits.get(i));
                if (slot < 0) {
                    return lock.validate(stamp) ? null : CONFLICT;
                }
                all = algorithms[slot].fits(current(slot, now), now, limits.get(i).cost());
            }
            if (!all) {
                refusal = refusal(limits, now);
            }
        } catch (RuntimeException torn) {
            return CONFLICT; // read while a writer moved things (an array grown, a ring wrapped)
        }
        if (!all) {
            // Validated before the refusal is returned: a torn read's numbers never reach a decision.
            return lock.validate(stamp) ? refusal : CONFLICT;
        }
        long write = lock.tryConvertToWriteLock(stamp);
        if (write == 0) {
            return CONFLICT;
        }
        boolean refresh;
        Decision admission = null;
        // One limit: the numbers and durations are chosen under the lock, the decision made after it.
        long remaining = 0;
        Duration reset = null;
        Duration retry = null;
        Duration next = null;
        try {
            // The commit's verdicts go to this caller's scratch, read under the lock only, as
            // decide's are: an admission allocates no verdict.
            Verdict[] scratch = scratch(n);
            // Nothing changed since the read: commit what it found to fit (the stamp held, so
            // each state read is still its slot's).
            long needed = now;
            for (int i = 0; i < n; i++) {
                needed = Math.max(needed, commit(slot(limits.get(i)), now, limits.get(i).cost(), scratch[i]));
            }
            long idle = idleNanos / 1_000;
            if (needed > idleAfterMicros) {
                // With an eighth of the longest TTL to spare, so that admissions in a row write it
                // now and then rather than each time (it is shared with the readers' fields);
                // the caller is only dropped that much later.
                idleAfterMicros = needed + idle / 8;
            }
            // Tell the cache's eviction policy of this use now and then, about as often as the
            // caller's state is renewed: a read per admission would cost as much as the decision.
            refresh = needed > refreshedMicros + idle - idle / 8;
            if (refresh) {
                refreshedMicros = now;
            }
            if (n == 1) {
                Verdict v = scratch[0];
                remaining = v.remaining();
                reset = resetOf(v);
                retry = Quotas.retry(v, reset);
                next = nextOf(v, reset, retry);
            } else {
                admission = Quotas.decision(true, limits, scratch);
            }
        } finally {
            lock.unlockWrite(write);
        }
        if (refresh) {
            cache.getIfPresent(tag); // outside the lock: maintenance may evict (retire) a caller
        }
        // Allocated outside the lock, which is held no longer than the commit: a caller's other
        // threads wait (or retry) less.
        return admission != null ? admission : admitted(limits.get(0), remaining, reset, retry, next);
    }

    /**
     * The refusal of these limits at {@code now}, from an optimistic read (the caller validates
     * it): one limit's verdict needs no array.
     */
    private Decision refusal(List<Limit> limits, long now) {
        int n = limits.size();
        if (n == 1) {
            Limit limit = limits.get(0);
            int slot = slot(limit);
            Verdict v = READ.get();
            algorithms[slot].evaluate(current(slot, now), now, limit.cost(), null, v);
            return Quotas.refusal(limit, v);
        }
        Verdict[] seen = new Verdict[n];
        for (int i = 0; i < n; i++) {
            seen[i] = new Verdict();
            int slot = slot(limits.get(i));
            algorithms[slot].evaluate(current(slot, now), now, limits.get(i).cost(), null, seen[i]);
        }
        return Quotas.decision(false, limits, seen);
    }

    /**
     * The reset of an admission under one limit: the last admission's again when it is the same
     * (as a bucket's is at each admission while it refills faster than requests come), so that
     * the decision, its quota list and its quota are most admissions' only allocations. Under the
     * write lock.
     */
    private Duration resetOf(Verdict v) {
        long micros = v.resetMicros();
        Duration reset = admittedReset;
        if (reset == null || micros != admittedResetMicros) {
            reset = MemoryStore.micros(micros);
            admittedReset = reset;
            admittedResetMicros = micros;
        }
        return reset;
    }

    /**
     * The next unit of an admission under one limit, as {@link #resetOf} (a draining bucket's next
     * unit stays the same while its reset grows). Under the write lock.
     */
    private Duration nextOf(Verdict v, Duration reset, Duration retry) {
        long micros = v.nextMicros();
        if (micros == v.resetMicros()) {
            return reset;
        }
        if (micros == v.retryMicros()) {
            return retry;
        }
        Duration next = admittedNext;
        if (next == null || micros != admittedNextMicros) {
            next = MemoryStore.micros(micros);
            admittedNext = next;
            admittedNextMicros = micros;
        }
        return next;
    }

    /** The admission under one limit with these numbers: {@link #admitted} if its budget was whole and they match. */
    private Decision admitted(Limit limit, long remaining, Duration reset, Duration retry, Duration next) {
        boolean whole = remaining == limit.capacity() - limit.cost();
        Decision last = admitted;
        if (whole && last != null && Quotas.admits(last, limit, remaining, reset, retry, next)) {
            return last;
        }
        Decision decision = new Decision(Decision.Outcome.ALLOWED,
                List.of(new Decision.Quota(limit, true, remaining, reset, retry, next)), Duration.ZERO);
        if (whole) {
            admitted = decision;
        }
        return decision;
    }

    /** Raises the time this caller stays, to keep a state that expires at {@code expiresAt}. */
    void keepUntil(long expiresAt) {
        idleAfterMicros = Math.max(idleAfterMicros, expiresAt);
    }

    /** Raises {@link #idleNanos} to the longest TTL these limits can need. */
    void lengthenIdle(List<Limit> limits) {
        if (limits == covered) {
            return;
        }
        for (int i = 0; i < limits.size(); i++) {
            idleNanos = Math.max(idleNanos, CompiledLimit.of(limits.get(i)).longestTtlNanos());
        }
        covered = limits;
    }

    /** Pauses these limits until {@code until} (see {@link RateAlgorithm#pause}). */
    void pause(long now, List<Limit> limits, long until) {
        refreshedMicros = now;
        keepUntil(pauseAll(now, limits, until));
    }

    /** This caller's {@code n} scratch verdicts, used under the write lock only. */
    private Verdict[] scratch(int n) {
        if (verdicts.length < n) {
            Verdict[] grown = new Verdict[n];
            for (int i = 0; i < n; i++) {
                grown[i] = new Verdict();
            }
            verdicts = grown;
        }
        return verdicts;
    }

    Decision decide(long now, List<Limit> limits) {
        refreshedMicros = now; // the cache was just read for this decision
        int n = limits.size();
        Verdict[] verdicts = scratch(n);
        if (n == 1) {
            // One limit: evaluating with commit consumes only if it fits, as the two passes would.
            keepUntil(commit(state(limits.get(0), now), now, limits.get(0).cost(), verdicts[0]));
            return verdicts[0].fits() ? admission(limits, verdicts) : Quotas.decision(false, limits, verdicts);
        }
        boolean all = true;
        for (int i = 0; i < n; i++) {
            int slot = state(limits.get(i), now);
            all &= algorithms[slot].fits(states[slot], now, limits.get(i).cost());
        }
        for (int i = 0; i < n; i++) {
            int slot = slot(limits.get(i));
            if (all) {
                keepUntil(commit(slot, now, limits.get(i).cost(), verdicts[i]));
            } else {
                algorithms[slot].evaluate(states[slot], now, limits.get(i).cost(), null, verdicts[i]);
            }
        }
        return Quotas.decision(all, limits, verdicts);
    }

    /** The decision of an admission under one limit, from its verdict. Under the write lock. */
    private Decision admission(List<Limit> limits, Verdict[] verdicts) {
        Verdict v = verdicts[0];
        Duration reset = resetOf(v);
        Duration retry = Quotas.retry(v, reset);
        return admitted(limits.get(0), v.remaining(), reset, retry, nextOf(v, reset, retry));
    }
}
