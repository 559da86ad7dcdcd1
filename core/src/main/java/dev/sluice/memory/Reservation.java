package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.algorithm.RateAlgorithm;
import dev.sluice.spi.algorithm.ReturnedSlots;
import dev.sluice.spi.algorithm.Verdict;

import java.util.Arrays;
import java.util.List;

import static dev.sluice.memory.MemoryStore.micros;

/**
 * Reserves one request under a caller's limits at the earliest instant from now on, at most a wait
 * ahead, where every limit fits and its slot has begun (the twin of decide.lua's {@code reserve}):
 * from now, each round moves to the longest retry of a limit that does not fit, or to the latest
 * {@link Verdict#fromMicros()} of the ones that do, and commits once a round finds nothing to wait
 * for. A state that expires before that instant is read there as absent, as its Redis key would read.
 *
 * <p>Before it extends any schedule, it takes the earliest slot a bucket's waiter gave up
 * ({@link ReturnedSlots}) from now on, within the wait and before the instant found so, where every
 * other limit fits and its slot has begun (the twin of decide.lua's {@code returned_slot}). Runs
 * under the caller's write lock.
 */
final class Reservation {
    /** The most rounds {@link #reserve} looks ahead; decide.lua's reserve stops at the same. */
    static final int RESERVE_ROUNDS = 4;

    private Reservation() {
    }

    /**
     * Reserves as the class comment says.
     *
     * @param ends   three numbers per limit: where its schedule ends after the commit
     *               ({@link RateAlgorithm#end}; for a returned slot taken, the slot and -1), and the
     *               reserved instant; {@code null}: not asked
     * @return {@link Decision.Outcome#ALLOWED}, committed at the reserved instant, whose quotas are
     *         as of that instant and whose retry-after is the wait until it; or
     *         {@link Decision.Outcome#REJECTED} with the quotas as of {@code now} and the wait it
     *         would have needed, nothing written
     */
    static Decision reserve(Caller caller, long now, List<Limit> limits, long maxWait, long[] ends) {
        caller.refreshedMicros = now;
        int n = limits.size();
        int[] slots = new int[n];
        Verdict[] seen = new Verdict[n];
        long ahead = maxWait;
        for (int i = 0; i < n; i++) {
            slots[i] = caller.state(limits.get(i), now);
            seen[i] = new Verdict();
            if (!caller.algorithm(slots[i]).reservesAhead()) {
                ahead = 0;
            }
        }
        long at = now;
        long refusedWait = -1;
        for (int round = 1; ; round++) {
            boolean all = true;
            long step = 0;
            for (int i = 0; i < n; i++) {
                boolean fits = evaluate(caller, slots[i], at, limits.get(i).cost(), seen[i]);
                all &= fits;
                step = Math.max(step, fits ? seen[i].fromMicros() : seen[i].retryMicros());
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
        long returned = ahead > 0 ? returnedSlot(caller, now, limits, slots, now + ahead,
                refusedWait < 0 ? at : Long.MAX_VALUE, seen, taking) : -1;
        if (returned >= 0) {
            at = returned;
        } else if (refusedWait >= 0) {
            for (int i = 0; i < n; i++) {
                evaluate(caller, slots[i], now, limits.get(i).cost(), seen[i]);
            }
            Decision refused = Quotas.decision(false, limits, seen);
            return new Decision(Decision.Outcome.REJECTED, refused.quotas(), micros(refusedWait));
        }
        for (int i = 0; i < n; i++) {
            int slot = slots[i];
            long cost = limits.get(i).cost();
            RateAlgorithm algorithm = caller.algorithm(slot);
            if (returned >= 0 && taking[i]) {
                // a slot the schedule granted already: its units were spent then, nothing more is
                long[] s = caller.writable(slot, now);
                caller.keepReturned(slot, algorithm.take(s, caller.returned(slot, now), at, cost, seen[i]));
                if (ends != null) {
                    ends[3 * i] = at;
                    ends[3 * i + 1] = -1;
                    ends[3 * i + 2] = at;
                }
                continue;
            }
            // A state that has ended by the reserved instant is absent there, but the slots given
            // up inside it and still ahead stay: its Redis key is rewritten, its :slots key is not.
            ReturnedSlots kept = caller.returned(slot, now);
            caller.writable(slot, at);
            caller.keepReturned(slot, kept);
            caller.keepUntil(caller.commit(slot, at, cost, seen[i]));
            if (ends != null) {
                algorithm.end(caller.stored(slot), ends, 3 * i);
                ends[3 * i + 2] = at;
            }
        }
        return new Decision(Decision.Outcome.ALLOWED, Quotas.decision(true, limits, seen).quotas(), micros(at - now));
    }

    private static boolean evaluate(Caller caller, int slot, long at, long cost, Verdict out) {
        caller.algorithm(slot).evaluate(caller.current(slot, at), at, cost, null, out);
        return out.fits();
    }

    /**
     * The earliest slot a bucket's waiter gave up, from {@code now} to {@code latest} and before
     * {@code before}, where every limit admits the reservation: a bucket that returned enough
     * tokens there ({@link RateAlgorithm#canTake}; {@code taking[i]} set), any other limit
     * fitting with its slot begun; or -1. Writes nothing.
     */
    private static long returnedSlot(Caller caller, long now, List<Limit> limits, int[] slots, long latest,
                                     long before, Verdict[] seen, boolean[] taking) {
        int n = limits.size();
        long[] candidates = null;
        int found = 0;
        for (int i = 0; i < n; i++) {
            ReturnedSlots returned = caller.returned(slots[i], now);
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
                long cost = limits.get(i).cost();
                RateAlgorithm algorithm = caller.algorithm(slots[i]);
                taking[i] = algorithm.canTake(caller.current(slots[i], x), caller.returned(slots[i], x), x, cost);
                all = taking[i] || evaluate(caller, slots[i], x, cost, seen[i]) && seen[i].fromMicros() == 0;
            }
            if (all) {
                return x;
            }
        }
        return -1;
    }
}
