package dev.sluice.spi.algorithm;

import dev.sluice.spi.CompiledLimit;

import static dev.sluice.spi.algorithm.Arithmetic.floorDiv;
import static dev.sluice.spi.algorithm.Arithmetic.target;
import static dev.sluice.spi.algorithm.Arithmetic.untilGone;

/**
 * Fixed window: {@code n} units counted in window number {@code w} of period-long windows
 * (aligned to the epoch), whole units.
 *
 * <p>State, five longs: {@code [present (0 or 1), w, n, count, period]}, the last two the
 * parameters it was written under. Invariant: {@code w} never decreases; a clock behind the stored
 * window counts into the stored window. Read under another period, the count stays in the new
 * window that holds the old window's start, until the old window ends.
 */
public final class FixedWindow extends Window {
    private static final int N = 2;
    private static final int W_COUNT = 3;

    FixedWindow(CompiledLimit limit) {
        super(limit);
    }

    @Override
    public long[] evaluate(long[] s, long now, long cost, long[] into, Verdict out) {
        long idx = floorDiv(now, window);
        long cw = idx;
        long cn = 0;
        long gone = -1;
        if (s[PRESENT] != 0) {
            long sw = s[W];
            long wWindow = s[W_WINDOW];
            if (s[W_COUNT] != count || wWindow != window) {
                gone = (sw + 1) * wWindow;
                sw = gone > now ? floorDiv(sw * wWindow, window) : idx - 1;
            }
            if (sw >= idx) {
                cw = sw;
                cn = s[N];
            } else {
                gone = -1;
            }
        }
        boolean fits = cn + cost <= count;
        if (out == null) {
            return fits ? s : null;
        }
        boolean commit = fits && into != null;
        long[] result = s;
        if (commit) {
            cn += cost;
            result = write(s, into, cw, cn);
        }
        long reset = (cw + 1) * window - now;
        // counted units come back all at once, when the window ends
        out.set(fits, Math.max(0, count - cn), reset, fits ? 0 : reset, reset, cn == 0 ? 0 : reset);
        out.fromMicros = Math.max(0, cw * window - now);
        if (!commit) {
            untilGone(gone, now, out);
        }
        return result;
    }

    private long[] write(long[] s, long[] into, long w, long n) {
        long[] next = target(s, into);
        next[PRESENT] = 1;
        next[W] = w;
        next[N] = n;
        next[W_COUNT] = count;
        next[W_WINDOW] = window;
        return next;
    }

    @Override
    public long[] pause(long[] s, long now, long until, long[] into) {
        long last = floorDiv(until - 1, window);
        boolean same = samePeriod(s);
        long w = s[W];
        if (same && w > last) {
            return s; // booked past the pause's end
        }
        return write(s, into, last, same && w == last ? Math.max(s[N], count) : count);
    }

    @Override
    public long expiresAt(long[] s) {
        return (s[W] + 1) * s[W_WINDOW];
    }

    @Override
    public long[] refund(long[] s, long now, long cost, long[] into) {
        if (!samePeriod(s) || s[W] < floorDiv(now, window)) {
            return s;
        }
        long[] next = target(s, into);
        next[N] = Math.max(0, s[N] - cost);
        return next;
    }

    /** Off the count of the reservation's window, while it is the stored one. */
    @Override
    public long[] giveBack(long[] s, long now, long cost, long end, long endRem, long[] into) {
        if (!samePeriod(s) || s[W] != end) {
            return null;
        }
        long[] next = target(s, into);
        next[N] = Math.max(0, s[N] - cost);
        return next;
    }
}
