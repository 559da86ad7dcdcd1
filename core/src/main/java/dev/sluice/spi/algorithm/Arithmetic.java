package dev.sluice.spi.algorithm;

/** The arithmetic the algorithms share: exact divisions, a refill that cannot overflow, unit conversions. */
final class Arithmetic {

    private Arithmetic() {
    }

    static long floorDiv(long a, long b) {
        return Math.floorDiv(a, b);
    }

    static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    /**
     * {@code ceilDiv(n, d)}, given {@code inverse = 1.0 / d}: where both are below 2<sup>53</sup>
     * (bucket units are, see {@code Units}) a multiplication estimates the quotient within 3 and
     * integer arithmetic corrects it, so the answer is exact; a 64-bit division costs several
     * times more, and a bucket's decision needs up to five. A divisor of 1 divides nothing.
     */
    static long ceilDiv(long n, long d, double inverse) {
        long q = floorDiv(n, d, inverse);
        return q * d == n ? q : q + 1;
    }

    /** {@code floorDiv(n, d)}, given {@code inverse = 1.0 / d}; see {@link #ceilDiv(long, long, double)}. */
    static long floorDiv(long n, long d, double inverse) {
        if (d == 1) {
            return n;
        }
        if (((n | d) >>> 53) != 0) {
            return Math.floorDiv(n, d); // negative, or too large for a double to hold exactly
        }
        long q = (long) (n * inverse);
        long r = n - q * d;
        while (r < 0) {
            q--;
            r += d;
        }
        while (r >= d) {
            q++;
            r -= d;
        }
        return q;
    }

    /**
     * A bucket's level after {@code elapsed} (at least 0) microseconds of refill. Full once
     * {@code elapsed * perMicro >= missing}, compared without a division (an overflowing
     * product is more than any missing amount).
     */
    static long refill(long l, long cap, long perMicro, long elapsed) {
        long missing = cap - l;
        if (missing > 0) {
            long gained = elapsed * perMicro;
            boolean full = Math.multiplyHigh(elapsed, perMicro) != 0 || gained < 0 || gained >= missing;
            return full ? cap : l + gained;
        }
        return l;
    }

    /**
     * The tokens a bucket written under other units had used, as units of a bucket of
     * {@code perToken} and {@code capacity}: whole tokens, rounded up, at most its burst.
     */
    static long convertedDebt(long oldDebt, long oldPerToken, long perToken, long capacity) {
        return Math.min(ceilDiv(oldDebt, oldPerToken), capacity / perToken) * perToken;
    }

    /**
     * Caps a converted state's reset, retry and next unit at {@code gone}, when it would have
     * expired under its old parameters (from then on the budget is whole); {@code gone < 0}: not
     * converted.
     */
    static void untilGone(long gone, long now, Verdict out) {
        if (gone >= 0) {
            out.resetMicros = Math.min(out.resetMicros, gone - now);
            out.retryMicros = Math.min(out.retryMicros, gone - now);
            out.nextMicros = Math.min(out.nextMicros, gone - now);
        }
    }

    /**
     * Whether a schedule ending at {@code end} and {@code endRem} still holds {@code need} units
     * from {@code instant} on: a call there then keeps the limit's spacing from the schedule's
     * next slot, which comes no earlier than its end. Checked without a product that could
     * overflow: a span of {@code ceil(need / perMicro)} microseconds holds it whatever the remainder.
     */
    static boolean covers(long end, long endRem, long instant, long need, long perMicro) {
        long span = end - instant;
        if (span < 0) {
            return false;
        }
        if (span >= ceilDiv(need, perMicro)) {
            return true;
        }
        return span * perMicro + endRem >= need;
    }

    /**
     * A bucket's stored {@code (time, debt)} with {@code need} units given back, if its schedule
     * ends at {@code (end, endRem)}: {@code time + debt / perMicro} and the remainder; else
     * {@code null}. The end moves back by exactly {@code need}: the time by its whole
     * microseconds, the debt by the rest (borrowing a microsecond if it must); {@code null} too
     * if the debt would not fit the capacity then.
     */
    static long[] givenBack(long time, long debt, long perMicro, long capacity, long need, long end, long endRem) {
        long d = Math.floorDiv(debt, perMicro);
        if (time + d != end || debt - d * perMicro != endRem) {
            return null;
        }
        long q = need / perMicro;
        long t = time - q;
        long left = debt - (need - q * perMicro);
        if (left < 0) {
            t--;
            left += perMicro;
        }
        return left > capacity ? null : new long[] {t, left};
    }

    /**
     * The array a write of {@code state} goes to: {@code into} itself when it is {@code state}, else
     * a copy of {@code state} in {@code into} when it has the length, else in a new array.
     */
    static long[] target(long[] state, long[] into) {
        if (into == state) {
            return into;
        }
        long[] next = into != null && into.length == state.length ? into : new long[state.length];
        System.arraycopy(state, 0, next, 0, state.length);
        return next;
    }
}
