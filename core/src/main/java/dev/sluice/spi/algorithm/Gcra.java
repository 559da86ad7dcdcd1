package dev.sluice.spi.algorithm;

import dev.sluice.spi.CompiledLimit;

import static dev.sluice.spi.algorithm.Arithmetic.ceilDiv;
import static dev.sluice.spi.algorithm.Arithmetic.convertedDebt;
import static dev.sluice.spi.algorithm.Arithmetic.floorDiv;
import static dev.sluice.spi.algorithm.Arithmetic.givenBack;
import static dev.sluice.spi.algorithm.Arithmetic.target;
import static dev.sluice.spi.algorithm.Arithmetic.untilGone;

/**
 * GCRA: one theoretical arrival time, kept exactly as {@code tat + rem / unitsPerMicro}
 * microseconds ({@code 0 <= rem < unitsPerMicro}); the caller's debt at {@code now} is
 * {@code (tat - now) * unitsPerMicro + rem} units, and a request fits while debt plus its units
 * stay within the capacity. This is the {@link TokenBucket} with {@code level = capacity - debt},
 * so both admit exactly the same requests.
 *
 * <p>State, seven longs: {@code [present (0 or 1), tat, rem, perToken, perMicro, capacity, written]}:
 * the units it was written under and when. Invariant: the arrival time never decreases under one
 * set of units. Read under other units, the tokens owed when written carry over, clamped to the
 * burst, and drain at the new rate from then on, as the token bucket's do.
 */
public final class Gcra extends Bucket {
    /** The length of a state. */
    public static final int LENGTH = 7;
    private static final int TAT = 1;
    private static final int REM = 2;
    private static final int WRITTEN = 6;

    /** {@code capacity / perMicro}: the longest delay within the capacity. */
    private final long longestDelay;

    Gcra(CompiledLimit limit) {
        super(limit);
        this.longestDelay = capacity / perMicro;
    }

    @Override
    public long[] absent() {
        return new long[LENGTH];
    }

    @Override
    public long[] evaluate(long[] s, long now, long cost, long[] into, Verdict out) {
        long need = cost * perToken;
        long delay = -1;
        long r = 0;
        long gone = -1;
        if (s[PRESENT] != 0) {
            long at = s[TAT];
            r = s[REM];
            if (!sameUnits(s)) {
                gone = at + (r > 0 ? 1 : 0);
                if (gone <= now) {
                    at = now - 1;
                    r = 0;
                    gone = -1;
                } else {
                    long written = s[WRITTEN];
                    long debt = convertedDebt((at - written) * s[W_PER_MICRO] + r, s[W_PER_TOKEN], perToken, capacity);
                    long d = debt / perMicro;
                    at = written + d;
                    r = debt - d * perMicro;
                }
            }
            delay = at - now;
        }
        if (delay < 0) {
            delay = 0; // the arrival time has passed: no debt
            r = 0;
        }
        boolean overCapacity = delay > longestDelay;
        long debt = overCapacity ? capacity + 1 : delay * perMicro + r;
        boolean fits = !overCapacity && debt + need <= capacity;
        if (out == null) {
            return fits ? s : null;
        }
        boolean commit = fits && into != null;
        long[] result = s;
        if (commit) {
            debt += need;
            delay = floorDiv(debt, perMicro, byMicro);
            r = debt - delay * perMicro;
            long[] next = target(s, into);
            next[TAT] = now + delay;
            next[REM] = r;
            next[WRITTEN] = now;
            written(next);
            result = next;
        }
        long reset = delay + (r > 0 ? 1 : 0);
        long remaining = overCapacity ? 0 : Math.max(0, floorDiv(capacity - debt, perToken, byToken));
        long retry = fits ? 0 : delay + ceilDiv(r + need - capacity, perMicro, byMicro);
        // debt must fall to capacity - (remaining + 1) tokens; written as retry is, from delay and r
        long next = !overCapacity && debt == 0 ? 0
                : delay + ceilDiv(r + (remaining + 1) * perToken - capacity, perMicro, byMicro);
        out.set(fits, remaining, reset, retry, reset, next);
        out.fromMicros = 0; // a debt within the capacity may be spent now
        if (!commit) {
            untilGone(gone, now, out);
        }
        return result;
    }

    @Override
    public long[] pause(long[] s, long now, long until, long[] into) {
        // the debt of a full bucket at until: nothing before, one token's time after it per token
        long pausedTat = until + capacity / perMicro;
        long pausedRem = capacity % perMicro;
        long tat = s[TAT];
        if (sameUnits(s) && (tat > pausedTat || tat == pausedTat && s[REM] >= pausedRem)) {
            return s;
        }
        long[] next = target(s, into);
        next[TAT] = pausedTat;
        next[REM] = pausedRem;
        next[WRITTEN] = until;
        written(next);
        return next;
    }

    @Override
    public long expiresAt(long[] s) {
        return s[TAT] + (s[REM] > 0 ? 1 : 0);
    }

    @Override
    public long[] refund(long[] s, long now, long cost, long[] into) {
        long tat = s[TAT];
        if (!sameUnits(s) || tat < now) {
            return s; // written under other units, or nothing owed any more
        }
        long debt = Math.max(0, (tat - now) * perMicro + s[REM] - cost * perToken);
        long[] next = target(s, into);
        next[TAT] = now + debt / perMicro;
        next[REM] = debt % perMicro;
        next[WRITTEN] = now;
        return next;
    }

    @Override
    public void end(long[] s, long[] out, int at) {
        out[at] = s[TAT];
        out[at + 1] = s[REM];
    }

    /** On the state as stored, {@code (written, owed)}, as the give-back script reads it. */
    @Override
    public long[] giveBack(long[] s, long now, long cost, long end, long endRem, long[] into) {
        if (!sameUnits(s) || endRem < 0) {
            return null;
        }
        long written = s[WRITTEN];
        long[] back = givenBack(written, (s[TAT] - written) * perMicro + s[REM], perMicro, capacity,
                cost * perToken, end, endRem);
        if (back == null) {
            return null;
        }
        long d = back[1] / perMicro;
        long[] next = target(s, into);
        next[WRITTEN] = back[0];
        next[TAT] = back[0] + d;
        next[REM] = back[1] - d * perMicro;
        return next;
    }
}
