package dev.sluice.memory;

import com.github.benmanes.caffeine.cache.Cache;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.spi.CompiledLimit;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.StampedLock;

import static dev.sluice.memory.MemoryStore.CONFLICT;
import static dev.sluice.memory.MemoryStore.micros;

/**
 * One caller's states, one per (policy, algorithm) like the Redis keys. Written under the
 * write lock of {@link #lock}; read without it only optimistically ({@link #tryDecide}), where
 * a torn read is detected by the lock's stamp and then discarded. {@link #idleNanos} is read by
 * the cache without it.
 */
final class Caller {
    /** The most rounds {@link #reserve} looks ahead; decide.lua's reserve stops at the same. */
    static final int RESERVE_ROUNDS = 4;
    final StampedLock lock = new StampedLock();
    private Limit[] keys = new Limit[2];
    /** The compiled form of each of {@link #keys}. */
    private CompiledLimit[] compiled = new CompiledLimit[2];
    private LimitState[] states = new LimitState[2];
    /**
     * The absent state of each of {@link #compiled}, never written: what an expired state reads
     * as, and what a commit resets it to in place, so that a state renewed at every admission
     * (a bucket whole again within microseconds) costs no new object.
     */
    private LimitState[] absents = new LimitState[2];
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
    private long refreshedMicros;
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
     * Decides from an optimistic read; returns {@link #CONFLICT} when a write intervened (the
     * read was torn or went stale, or another decision committed first), or {@code null} for
     * the locked path: the caller was retired or a limit is new to it (the locked path
     * lengthens the caller's idle time). An absent or expired state is read as its slot's absent
     * one and, if the request is admitted, reset to it in place under the lock. A refusal returned
     * here was computed from the state as it stood at one instant (the stamp proves no write
     * intervened) and wrote nothing; the racy read can only send a request to the lock, never admit one the lock would refuse.
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
                all = current(slot, now).evaluate(now, limits.get(i).cost(), false, null);
            }
            if (!all) {
                seen = new Verdict[n];
                for (int i = 0; i < n; i++) {
                    seen[i] = new Verdict();
                    current(slot(limits.get(i)), now).evaluate(now, limits.get(i).cost(), false, seen[i]);
                }
            }
        } catch (RuntimeException torn) {
            return CONFLICT; // read while a writer moved things (an array grown, a ring wrapped)
        }
        if (!all) {
            // Validated before the verdicts are used: a torn read's numbers never reach a decision.
            if (!lock.validate(stamp)) {
                return CONFLICT;
            }
            return decision(false, limits, seen);
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
                LimitState chosen = writable(slot(limits.get(i)), now);
                chosen.evaluate(now, limits.get(i).cost(), true, scratch[i]);
                chosen.expiresAtMicros = now + scratch[i].ttlMicros;
                needed = Math.max(needed, chosen.expiresAtMicros);
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
                remaining = v.remaining;
                reset = admittedReset(v.resetMicros);
                retry = v.retryMicros == v.resetMicros ? reset : micros(v.retryMicros);
                next = v.nextMicros == v.resetMicros ? reset : v.nextMicros == v.retryMicros ? retry : micros(v.nextMicros);
            } else {
                admission = decision(true, limits, scratch);
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

    /** Where the state of this very limit instance is, or -1. */
    private int slot(Limit limit) {
        Limit[] k = keys;
        for (int j = 0; j < size; j++) {
            if (k[j] == limit) {
                return j;
            }
        }
        return -1;
    }

    /** The state in {@code slot} as of {@code now}, to read only: an expired state is an absent key. */
    private LimitState current(int slot, long now) {
        LimitState s = states[slot];
        return s.isAbsent() || s.expiresAtMicros <= now ? absents[slot] : s;
    }

    /** The state in {@code slot} as of {@code now}, to write under the write lock: an expired one is made absent in place. */
    private LimitState writable(int slot, long now) {
        LimitState s = states[slot];
        if (!s.isAbsent() && s.expiresAtMicros <= now) {
            s.copyStored(absents[slot]); // an expired state is an absent key
        }
        return s;
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
     * The state of a limit's (policy, algorithm), the same instance as last time found first;
     * a limit with other parameters reads the same stored values under its own (see
     * {@link LimitState#under}), as a Redis key is read by a changed limit.
     */
    private LimitState state(Limit limit, long now) {
        int found = slot(limit);
        for (int i = 0; i < size && found < 0; i++) {
            if (keys[i].algorithm() == limit.algorithm() && keys[i].policy().equals(limit.policy())) {
                CompiledLimit other = CompiledLimit.of(limit);
                if (!compiled[i].sameParameters(other)) {
                    states[i] = states[i].under(other);
                    absents[i] = LimitState.absent(other);
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
                absents = Arrays.copyOf(absents, size * 2);
            }
            found = size++;
            keys[found] = limit;
            compiled[found] = CompiledLimit.of(limit);
            states[found] = LimitState.absent(compiled[found]);
            absents[found] = LimitState.absent(compiled[found]);
            return states[found];
        }
        return writable(found, now);
    }

    /** Gives back one request's cost under each of these limits (see {@link LimitState#refund}). */
    void refund(long now, List<Limit> limits) {
        for (Limit limit : limits) {
            state(limit, now).refund(now, limit.cost());
        }
    }

    /**
     * Returns a reservation given up by its waiter under each of these limits (see
     * {@link LimitState#giveBack}); {@code ends} as {@link #reserve} wrote them.
     */
    void giveBack(long now, List<Limit> limits, long[] ends) {
        for (int i = 0; i < limits.size(); i++) {
            Limit limit = limits.get(i);
            state(limit, now).giveBack(now, limit.cost(), ends[3 * i], ends[3 * i + 1], ends[3 * i + 2]);
        }
    }

    /** Pauses these limits until {@code until} (see {@link LimitState#pause}). */
    void pause(long now, List<Limit> limits, long until) {
        refreshedMicros = now;
        for (Limit limit : limits) {
            LimitState paused = state(limit, now);
            paused.pause(now, until);
            idleAfterMicros = Math.max(idleAfterMicros, paused.expiresAtMicros);
        }
    }

    /**
     * Reserves one request under these limits at the earliest instant from {@code now} on, at most
     * {@code maxWait} microseconds ahead, where every limit fits and its slot has begun (the twin
     * of decide.lua's {@code reserve}): from {@code now}, each round moves to the longest retry of
     * a limit that does not fit, or to the latest {@link Verdict#fromMicros} of the ones that do,
     * and commits once a round finds nothing to wait for. A state that expires before that
     * instant is read there as absent, as its Redis key would read.
     *
     * <p>Before it extends any schedule, it takes the earliest slot a bucket's waiter gave up
     * ({@link ReturnedSlots}) from {@code now} on, within the wait and before the instant found
     * so, where every other limit fits and its slot has begun (the twin of decide.lua's
     * {@code returned_slot}).
     *
     * @param ends   three numbers per limit: where its schedule ends after the commit
     *               ({@link LimitState#end}; for a returned slot taken, the slot and -1), and the
     *               reserved instant; {@code null}: not asked
     * @return {@link Decision.Outcome#ALLOWED}, committed at the reserved instant, whose quotas are
     *         as of that instant and whose retry-after is the wait until it; or
     *         {@link Decision.Outcome#REJECTED} with the quotas as of {@code now} and the wait it
     *         would have needed, nothing written
     */
    Decision reserve(long now, List<Limit> limits, long maxWait, long[] ends) {
        refreshedMicros = now;
        int n = limits.size();
        int[] slots = new int[n];
        Verdict[] seen = new Verdict[n];
        for (int i = 0; i < n; i++) {
            state(limits.get(i), now);
            slots[i] = slot(limits.get(i));
            seen[i] = new Verdict();
        }
        long ahead = maxWait;
        for (Limit limit : limits) {
            if (limit.algorithm() == Algorithm.SLIDING_LOG) {
                // entries stamped ahead would trim ones that still count now, which a refund
                // could not bring back: a log reserves only what it has now
                ahead = 0;
            }
        }
        long at = now;
        long refusedWait = -1;
        for (int round = 1; ; round++) {
            boolean all = true;
            long step = 0;
            for (int i = 0; i < n; i++) {
                boolean fits = current(slots[i], at).evaluate(at, limits.get(i).cost(), false, seen[i]);
                all &= fits;
                step = Math.max(step, fits ? seen[i].fromMicros : seen[i].retryMicros);
            }
            if (all && step == 0) {
                break;
            }
            step = Math.max(1, step);
            if (round == RESERVE_ROUNDS || step > ahead - (at - now)) {
                refusedWait = at - now + step;
                break;
            }
            at += step;
        }
        boolean[] taking = ahead > 0 ? new boolean[n] : null;
        long returned = ahead > 0 ? returnedSlot(now, limits, slots, now + ahead, refusedWait < 0 ? at : Long.MAX_VALUE,
                seen, taking) : -1;
        if (returned >= 0) {
            at = returned;
        } else if (refusedWait >= 0) {
            for (int i = 0; i < n; i++) {
                current(slots[i], now).evaluate(now, limits.get(i).cost(), false, seen[i]);
            }
            Decision refused = decision(false, limits, seen);
            return new Decision(Decision.Outcome.REJECTED, refused.quotas(), micros(refusedWait));
        }
        for (int i = 0; i < n; i++) {
            long cost = limits.get(i).cost();
            if (returned >= 0 && taking[i]) {
                // a slot the schedule granted already: its units were spent then, nothing more is
                LimitState chosen = writable(slots[i], now);
                chosen.evaluate(at, cost, false, seen[i]);
                chosen.take(at, cost);
                seen[i].fits = true;
                seen[i].retryMicros = 0;
                if (ends != null) {
                    ends[3 * i] = at;
                    ends[3 * i + 1] = -1;
                    ends[3 * i + 2] = at;
                }
                continue;
            }
            // A state that has ended by the reserved instant is absent there, but the slots given
            // up inside it and still ahead stay: its Redis key is rewritten, its :slots key is not.
            ReturnedSlots kept = states[slots[i]].returned();
            LimitState chosen = writable(slots[i], at);
            if (kept != null && chosen.returned() == null) {
                chosen.keepReturned(kept);
            }
            chosen.evaluate(at, cost, true, seen[i]);
            chosen.expiresAtMicros = at + seen[i].ttlMicros;
            idleAfterMicros = Math.max(idleAfterMicros, chosen.expiresAtMicros);
            if (ends != null) {
                chosen.end(ends, 3 * i);
                ends[3 * i + 2] = at;
            }
        }
        return new Decision(Decision.Outcome.ALLOWED, decision(true, limits, seen).quotas(), micros(at - now));
    }

    /**
     * The earliest slot a bucket's waiter gave up, from {@code now} to {@code latest} and before
     * {@code before}, where every limit admits the reservation: a bucket that returned enough
     * tokens there ({@link LimitState#canTake}; {@code taking[i]} set), any other limit
     * fitting with its slot begun; or -1. Writes nothing.
     */
    private long returnedSlot(long now, List<Limit> limits, int[] slots, long latest, long before, Verdict[] seen,
                              boolean[] taking) {
        int n = limits.size();
        long[] candidates = null;
        int found = 0;
        for (int i = 0; i < n; i++) {
            ReturnedSlots returned = current(slots[i], now).returned();
            for (int j = 0; returned != null && j < returned.size(); j++) {
                long x = returned.at(j);
                if (x >= now && x <= latest && x < before) {
                    if (candidates == null) {
                        candidates = new long[ReturnedSlots.MOST * n];
                    }
                    candidates[found++] = x;
                }
            }
        }
        if (candidates == null) {
            return -1;
        }
        Arrays.sort(candidates, 0, found);
        for (int c = 0; c < found; c++) {
            long x = candidates[c];
            boolean all = true;
            for (int i = 0; i < n && all; i++) {
                LimitState state = current(slots[i], x);
                long cost = limits.get(i).cost();
                taking[i] = state.canTake(x, cost);
                all = taking[i] || state.evaluate(x, cost, false, seen[i]) && seen[i].fromMicros == 0;
            }
            if (all) {
                return x;
            }
        }
        return -1;
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
                    compiled[i] = CompiledLimit.of(limit);
                    states[i] = LimitState.absent(compiled[i]);
                    absents[i] = LimitState.absent(compiled[i]);
                }
            }
        }
    }

    Decision decide(long now, List<Limit> limits) {
        refreshedMicros = now; // the cache was just read for this decision
        int n = limits.size();
        Verdict[] verdicts = scratch(n);
        if (n == 1) {
            // One limit: evaluating with commit consumes only if it fits, as the two passes would.
            LimitState only = state(limits.get(0), now);
            only.evaluate(now, limits.get(0).cost(), true, verdicts[0]);
            if (verdicts[0].fits) {
                only.expiresAtMicros = now + verdicts[0].ttlMicros;
                idleAfterMicros = Math.max(idleAfterMicros, only.expiresAtMicros);
            }
            return verdicts[0].fits ? admission(limits, verdicts) : decision(false, limits, verdicts);
        }
        LimitState[] chosen = new LimitState[n];
        boolean all = true;
        for (int i = 0; i < n; i++) {
            chosen[i] = state(limits.get(i), now);
            all &= chosen[i].evaluate(now, limits.get(i).cost(), false, null);
        }
        for (int i = 0; i < n; i++) {
            chosen[i].evaluate(now, limits.get(i).cost(), all, verdicts[i]);
            if (all) {
                chosen[i].expiresAtMicros = now + verdicts[i].ttlMicros;
                idleAfterMicros = Math.max(idleAfterMicros, chosen[i].expiresAtMicros);
            }
        }
        return decision(all, limits, verdicts);
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
            reset = micros(micros);
            admittedReset = reset;
            admittedResetMicros = micros;
        }
        return reset;
    }

    /** {@link #decision} of an admission under one limit, with {@link #admittedReset}. Under the write lock. */
    private Decision admission(List<Limit> limits, Verdict[] verdicts) {
        return new Decision(Decision.Outcome.ALLOWED,
                List.of(quota(limits.get(0), verdicts[0], admittedReset(verdicts[0].resetMicros))), Duration.ZERO);
    }

    /**
     * The decision these verdicts make, one quota per limit. Equal durations share one instance
     * (a refusal's retry-after is its binding quota's), and one limit needs no array.
     */
    private static Decision decision(boolean all, List<Limit> limits, Verdict[] verdicts) {
        List<Decision.Quota> quotas;
        Decision.Quota longest;
        if (limits.size() == 1) {
            longest = quota(limits.get(0), verdicts[0]);
            quotas = List.of(longest);
        } else {
            Decision.Quota[] each = new Decision.Quota[limits.size()];
            int at = 0;
            for (int i = 0; i < each.length; i++) {
                each[i] = quota(limits.get(i), verdicts[i]);
                if (verdicts[i].retryMicros > verdicts[at].retryMicros) {
                    at = i;
                }
            }
            longest = each[at];
            quotas = List.of(each);
        }
        return all
                ? new Decision(Decision.Outcome.ALLOWED, quotas, Duration.ZERO)
                : new Decision(Decision.Outcome.REJECTED, quotas, longest.retryAfter());
    }

    private static Decision.Quota quota(Limit limit, Verdict v) {
        return quota(limit, v, micros(v.resetMicros));
    }

    /** The quota of {@code v}, whose {@code reset} is given; retry and next unit share it when equal. */
    private static Decision.Quota quota(Limit limit, Verdict v, Duration reset) {
        Duration retry = v.retryMicros == v.resetMicros ? reset : micros(v.retryMicros);
        Duration next = v.nextMicros == v.resetMicros ? reset : v.nextMicros == v.retryMicros ? retry : micros(v.nextMicros);
        return new Decision.Quota(limit, v.fits, v.remaining, reset, retry, next);
    }
}
