package dev.sluice.memory;

import com.github.benmanes.caffeine.cache.Cache;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.spi.CompiledLimit;
import dev.sluice.spi.algorithm.RateAlgorithm;
import dev.sluice.spi.algorithm.ReturnedSlots;
import dev.sluice.spi.algorithm.Verdict;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.StampedLock;

import static dev.sluice.memory.MemoryStore.CONFLICT;

/**
 * One caller's states, one per (policy, algorithm) like the Redis keys, and the decisions on them:
 * each state a {@code long[]} held here and written by its {@link RateAlgorithm}, in place.
 * Written under the write lock of {@link #lock}; read without it only optimistically
 * ({@link #tryDecide}), where a torn read is detected by the lock's stamp and then discarded.
 * {@link #idleNanos} is read by the cache without it. Reservations: {@link Reservation}.
 */
final class Caller {
    final StampedLock lock = new StampedLock();
    private Limit[] keys = new Limit[2];
    /** The arithmetic of each of {@link #keys}, under its parameters. */
    private RateAlgorithm[] algorithms = new RateAlgorithm[2];
    private long[][] states = new long[2][];
    /**
     * The absent state of each of {@link #algorithms}, never written: what an expired state reads
     * as. A commit resets an expired state in place, so that a state renewed at every admission (a
     * bucket whole again within microseconds) costs no new array.
     */
    private long[][] absents = new long[2][];
    /** When each state becomes equal to an absent one, in store time; meaningless while absent. */
    private long[] expires = new long[2];
    /** The slots given up inside each bucket's schedule; {@code null}: none. */
    private ReturnedSlots[] returned = new ReturnedSlots[2];
    /**
     * The reset of the last admission under one limit and its microseconds, given again to an
     * admission with the same reset (see {@link #admittedReset}). Under the write lock only.
     */
    private Duration admittedReset;
    private long admittedResetMicros;
    private Verdict[] verdicts = {new Verdict(), new Verdict()};
    private int size;
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
    Decision tryDecide(TimeSource time, List<Limit> limits, Cache<String, Caller> cache, String tag) {
        long stamp = lock.tryOptimisticRead();
        if (stamp == 0) {
            return CONFLICT;
        }
        if (retired || limits != covered) {
            return lock.validate(stamp) ? null : CONFLICT;
        }
        long now = time.nowMicros();
        int n = limits.size();
        boolean all = true;
        Verdict[] seen = null;
        try {
            // First only whether each limit fits: an admission then computes its verdicts once,
            // from the state it commits.
            for (int i = 0; i < n && all; i++) {
                int slot = slot(limits.get(i));
                if (slot < 0) {
                    return lock.validate(stamp) ? null : CONFLICT;
                }
                all = algorithms[slot].evaluate(current(slot, now), now, limits.get(i).cost(), null, null);
            }
            if (!all) {
                seen = new Verdict[n];
                for (int i = 0; i < n; i++) {
                    seen[i] = new Verdict();
                    int slot = slot(limits.get(i));
                    algorithms[slot].evaluate(current(slot, now), now, limits.get(i).cost(), null, seen[i]);
                }
            }
        } catch (RuntimeException torn) {
            return CONFLICT; // read while a writer moved things (an array grown, a ring wrapped)
        }
        if (!all) {
            // Validated before the verdicts are used: a torn read's numbers never reach a decision.
            return lock.validate(stamp) ? Quotas.decision(false, limits, seen) : CONFLICT;
        }
        long write = lock.tryConvertToWriteLock(stamp);
        if (write == 0) {
            return CONFLICT;
        }
        boolean refresh;
        Decision admission = null;
        // One limit: the durations are chosen under the lock, the decision made after it.
        long remaining = 0;
        Duration reset = null;
        Duration retry = null;
        Duration next = null;
        try {
            // The commit's verdicts go to this caller's scratch, read under the lock only, as
            // decide's are: an admission allocates no verdict.
            Verdict[] scratch = scratch(n);
            // Nothing changed since the read: commit what it found to fit.
            long needed = now;
            for (int i = 0; i < n; i++) {
                // the stamp held, so the state read is still this slot's
                int slot = slot(limits.get(i));
                needed = Math.max(needed, commit(slot, now, limits.get(i).cost(), scratch[i]));
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
                reset = admittedReset(v.resetMicros());
                retry = Quotas.retry(v, reset);
                next = Quotas.next(v, reset, retry);
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
        return admission != null ? admission : new Decision(Decision.Outcome.ALLOWED,
                List.of(new Decision.Quota(limits.get(0), true, remaining, reset, retry, next)), Duration.ZERO);
    }

    /**
     * Evaluates {@code cost} at {@code at} on the writable state of {@code slot}, committing it if it
     * fits; the verdict to {@code out}. Under the write lock.
     *
     * @return when the state expires, if it was committed; else {@code at}
     */
    long commit(int slot, long at, long cost, Verdict out) {
        long[] s = writable(slot, at);
        if (!algorithms[slot].evaluate(s, at, cost, s, out)) {
            return at;
        }
        states[slot] = out.state();
        expires[slot] = at + out.ttlMicros();
        return expires[slot];
    }

    /** Where the state of this very limit instance is, or -1. */
    int slot(Limit limit) {
        Limit[] k = keys;
        for (int j = 0; j < size; j++) {
            if (k[j] == limit) {
                return j;
            }
        }
        return -1;
    }

    RateAlgorithm algorithm(int slot) {
        return algorithms[slot];
    }

    /** The state in {@code slot} as of {@code now}, to read only: an expired state is an absent key. */
    long[] current(int slot, long now) {
        long[] s = states[slot];
        return RateAlgorithm.isAbsent(s) || expires[slot] <= now ? absents[slot] : s;
    }

    /** The slots returned to the state in {@code slot} as of {@code now}: none once it has expired. */
    ReturnedSlots returned(int slot, long now) {
        return current(slot, now) == absents[slot] ? null : returned[slot];
    }

    /** The state in {@code slot} as of {@code now}, to write under the write lock: an expired one is reset in place. */
    long[] writable(int slot, long now) {
        long[] s = states[slot];
        if (!RateAlgorithm.isAbsent(s) && expires[slot] <= now) {
            Arrays.fill(s, 0); // an expired state is an absent key
            returned[slot] = null;
        }
        return s;
    }

    /** Keeps {@code slots} as the returned slots of {@code slot}. Under the write lock. */
    void keepReturned(int slot, ReturnedSlots slots) {
        returned[slot] = slots;
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

    /**
     * The slot of a limit's (policy, algorithm), the same instance as last time found first, its
     * state writable at {@code now}; a limit with other parameters reads the same stored values
     * under its own arithmetic, as a Redis key is read by a changed limit.
     */
    int state(Limit limit, long now) {
        int found = slot(limit);
        for (int i = 0; i < size && found < 0; i++) {
            if (keys[i].algorithm() == limit.algorithm() && keys[i].policy().equals(limit.policy())) {
                CompiledLimit other = CompiledLimit.of(limit);
                if (!algorithms[i].limit().sameParameters(other)) {
                    algorithms[i] = RateAlgorithm.of(other);
                    absents[i] = algorithms[i].absent();
                }
                keys[i] = limit;
                found = i;
            }
        }
        if (found < 0) {
            if (size == keys.length) {
                keys = Arrays.copyOf(keys, size * 2);
                algorithms = Arrays.copyOf(algorithms, size * 2);
                states = Arrays.copyOf(states, size * 2);
                absents = Arrays.copyOf(absents, size * 2);
                expires = Arrays.copyOf(expires, size * 2);
                returned = Arrays.copyOf(returned, size * 2);
            }
            found = size++;
            keys[found] = limit;
            forget(found, limit);
        }
        writable(found, now);
        return found;
    }

    /** Gives back one request's cost under each of these limits (see {@link RateAlgorithm#refund}). */
    void refund(long now, List<Limit> limits) {
        for (Limit limit : limits) {
            int slot = state(limit, now);
            states[slot] = algorithms[slot].refund(states[slot], now, limit.cost(), states[slot]);
        }
    }

    /**
     * Returns a reservation given up by its waiter under each of these limits (see
     * {@link RateAlgorithm#giveBack}); {@code ends} as {@link Reservation#reserve} wrote them.
     */
    void giveBack(long now, List<Limit> limits, long[] ends) {
        for (int i = 0; i < limits.size(); i++) {
            Limit limit = limits.get(i);
            int slot = state(limit, now);
            long[] s = states[slot];
            long[] back = algorithms[slot].giveBack(s, now, limit.cost(), ends[3 * i], ends[3 * i + 1], s);
            if (back != null) {
                states[slot] = back;
            } else {
                returned[slot] = algorithms[slot].returnSlot(s, returned[slot], now, limit.cost(), ends[3 * i + 2]);
            }
        }
    }

    /** Pauses these limits until {@code until} (see {@link RateAlgorithm#pause}). */
    void pause(long now, List<Limit> limits, long until) {
        refreshedMicros = now;
        for (Limit limit : limits) {
            int slot = state(limit, now);
            states[slot] = algorithms[slot].pause(states[slot], now, until, states[slot]);
            returned[slot] = null; // a slot given up before the pause's end must not be sent in it
            expires[slot] = algorithms[slot].expiresAt(states[slot]);
            keepUntil(expires[slot]);
        }
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

    /** Makes the states of these limits' (policy, algorithm) absent. */
    void forget(List<Limit> limits) {
        for (Limit limit : limits) {
            for (int i = 0; i < size; i++) {
                if (keys[i].algorithm() == limit.algorithm() && keys[i].policy().equals(limit.policy())) {
                    keys[i] = limit;
                    forget(i, limit);
                }
            }
        }
    }

    /** Makes the state in {@code slot} an absent one of {@code limit}. */
    private void forget(int slot, Limit limit) {
        algorithms[slot] = RateAlgorithm.of(CompiledLimit.of(limit));
        states[slot] = algorithms[slot].absent();
        absents[slot] = algorithms[slot].absent();
        expires[slot] = 0;
        returned[slot] = null;
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
            all &= algorithms[slot].evaluate(states[slot], now, limits.get(i).cost(), null, null);
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

    /**
     * The reset of an admission under one limit: the last admission's again when it is the same
     * (as it is at each admission of a bucket that refills faster than requests come, whose reset
     * is its next unit too), so that the decision, its quota list and its quota are all such an
     * admission allocates. Under the write lock.
     */
    private Duration admittedReset(long micros) {
        Duration reset = admittedReset;
        if (reset == null || micros != admittedResetMicros) {
            reset = MemoryStore.micros(micros);
            admittedReset = reset;
            admittedResetMicros = micros;
        }
        return reset;
    }

    /** The decision of an admission under one limit, with {@link #admittedReset}. Under the write lock. */
    private Decision admission(List<Limit> limits, Verdict[] verdicts) {
        return new Decision(Decision.Outcome.ALLOWED, List.of(Quotas.quota(limits.get(0), verdicts[0],
                admittedReset(verdicts[0].resetMicros()))), Duration.ZERO);
    }
}
