package dev.sluice.spi.algorithm;

import dev.sluice.spi.CompiledLimit;

import static dev.sluice.spi.algorithm.Arithmetic.ceilDiv;
import static dev.sluice.spi.algorithm.Arithmetic.convertedDebt;
import static dev.sluice.spi.algorithm.Arithmetic.floorDiv;
import static dev.sluice.spi.algorithm.Arithmetic.givenBack;
import static dev.sluice.spi.algorithm.Arithmetic.refill;
import static dev.sluice.spi.algorithm.Arithmetic.target;
import static dev.sluice.spi.algorithm.Arithmetic.untilGone;

/**
 * Token bucket in fixed-point units: {@code level} units at time {@code ts}, refilled lazily at
 * {@link CompiledLimit#unitsPerMicro()} per microsecond, capped at {@link CompiledLimit#capacityUnits()}.
 *
 * <p>State, six longs: {@code [present (0 or 1), level, ts, perToken, perMicro, capacity]}, the
 * last three the units it was written under. Invariant: {@code ts} never decreases and
 * {@code 0 <= level <= capacity} of those units. Read under other units, the tokens used at
 * {@code ts} carry over, clamped to the burst, and refill at the new rate from {@code ts} on.
 */
public final class TokenBucket extends Bucket {
    /** The length of a state. */
    public static final int LENGTH = 6;
    private static final int LEVEL = 1;
    private static final int TS = 2;

    TokenBucket(CompiledLimit limit) {
        super(limit);
    }

    @Override
    public long[] absent() {
        return new long[LENGTH];
    }

    @Override
    public long[] evaluate(long[] s, long now, long cost, long[] into, Verdict out) {
        long t = now;
        long l = capacity;
        long gone = -1;
        if (s[PRESENT] != 0) {
            long ts = s[TS];
            t = Math.max(now, ts);
            l = s[LEVEL];
            if (!sameUnits(s)) {
                long wCapacity = s[W_CAPACITY];
                gone = ts + ceilDiv(wCapacity - l, s[W_PER_MICRO]);
                if (gone <= now) {
                    l = capacity;
                    gone = -1;
                } else {
                    l = capacity - convertedDebt(wCapacity - l, s[W_PER_TOKEN], perToken, capacity);
                }
            }
            l = refill(l, capacity, perMicro, t - ts);
        }
        long need = cost * perToken;
        boolean fits = l >= need;
        if (out == null) {
            return fits ? s : null;
        }
        boolean commit = fits && into != null;
        long[] result = s;
        if (commit) {
            l -= need;
            long[] next = target(s, into);
            next[LEVEL] = l;
            next[TS] = t;
            written(next);
            result = next;
        }
        long skew = t - now;
        long reset = skew + ceilDiv(capacity - l, perMicro, byMicro);
        long retry = fits ? 0 : skew + ceilDiv(need - l, perMicro, byMicro);
        long tokens = floorDiv(l, perToken, byToken);
        // the next whole token: (tokens + 1) tokens, reached by refilling from l
        long next = l >= capacity ? 0 : skew + ceilDiv((tokens + 1) * perToken - l, perMicro, byMicro);
        out.set(fits, tokens, reset, retry, reset, next);
        out.fromMicros = skew;
        if (!commit) {
            untilGone(gone, now, out);
        }
        return result;
    }

    @Override
    public long[] pause(long[] s, long now, long until, long[] into) {
        boolean same = sameUnits(s);
        long ts = s[TS];
        long level = s[LEVEL];
        long t = s[PRESENT] != 0 ? Math.max(ts, until) : until;
        long l = 0;
        if (same && ts > until && ceilDiv(level, perMicro) > ts - until) {
            // booked past the pause's end: the lower of the two buckets at ts
            l = (ts - until) * perMicro;
        } else if (same && ts > until) {
            l = level;
        }
        long[] next = target(s, into);
        next[LEVEL] = l;
        next[TS] = t;
        written(next);
        return next;
    }

    @Override
    public long expiresAt(long[] s) {
        return s[TS] + ceilDiv(capacity - s[LEVEL], perMicro);
    }

    @Override
    public long[] refund(long[] s, long now, long cost, long[] into) {
        if (!sameUnits(s)) {
            return s;
        }
        long ts = s[TS];
        long t = Math.max(now, ts);
        long level = Math.min(capacity, refill(s[LEVEL], capacity, perMicro, t - ts) + cost * perToken);
        long[] next = target(s, into);
        next[LEVEL] = level;
        next[TS] = t;
        return next;
    }

    @Override
    public void end(long[] s, long[] out, int at) {
        long debt = capacity - s[LEVEL];
        long d = Math.floorDiv(debt, perMicro);
        out[at] = s[TS] + d;
        out[at + 1] = debt - d * perMicro;
    }

    @Override
    public long[] giveBack(long[] s, long now, long cost, long end, long endRem, long[] into) {
        if (!sameUnits(s) || endRem < 0) {
            return null;
        }
        long[] back = givenBack(s[TS], capacity - s[LEVEL], perMicro, capacity, cost * perToken, end, endRem);
        if (back == null) {
            return null;
        }
        long[] next = target(s, into);
        next[TS] = back[0];
        next[LEVEL] = capacity - back[1];
        return next;
    }
}
