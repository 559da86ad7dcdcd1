package dev.sluice.memory;

import dev.sluice.Limit;
import dev.sluice.spi.CompiledLimit;
import dev.sluice.spi.algorithm.RateAlgorithm;
import dev.sluice.spi.algorithm.ReturnedSlots;
import dev.sluice.spi.algorithm.Verdict;

import java.util.Arrays;
import java.util.List;

/**
 * A caller's states, one per (policy, algorithm) like the Redis keys: each a {@code long[]} with
 * its {@link RateAlgorithm}, its expiry and a bucket's returned slots, found by the limit instance
 * that last used it. The operations that write one state at a time live here; {@link Caller}
 * decides on several under its lock. Not thread-safe: the caller's lock guards it.
 */
abstract class StateTable {
    private Limit[] keys = new Limit[2];
    /** The arithmetic of each of {@link #keys}, under its parameters. */
    RateAlgorithm[] algorithms = new RateAlgorithm[2];
    long[][] states = new long[2][];
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
    private int size;

    /**
     * Evaluates {@code cost} at {@code at} on the writable state of {@code slot}, committing it if it
     * fits; the verdict to {@code out}. Under the write lock.
     *
     * @return when the state expires, if it was committed; else {@code at}
     */
    long commit(int slot, long at, long cost, Verdict out) {
        long[] s = writable(slot, at);
        long[] next = algorithms[slot].evaluate(s, at, cost, s, out);
        if (!out.fits()) {
            return at;
        }
        states[slot] = next;
        expires[slot] = at + out.ttlMicros();
        return expires[slot];
    }

    /** The state stored in {@code slot}, expired or not. */
    long[] stored(int slot) {
        return states[slot];
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

    /**
     * Pauses these limits until {@code until} (see {@link RateAlgorithm#pause}).
     *
     * @return when the last of the paused states expires
     */
    long pauseAll(long now, List<Limit> limits, long until) {
        long latest = now;
        for (Limit limit : limits) {
            int slot = state(limit, now);
            states[slot] = algorithms[slot].pause(states[slot], now, until, states[slot]);
            returned[slot] = null; // a slot given up before the pause's end must not be sent in it
            expires[slot] = algorithms[slot].expiresAt(states[slot]);
            latest = Math.max(latest, expires[slot]);
        }
        return latest;
    }
}
