package dev.sluice.spi.algorithm;

import dev.sluice.spi.CompiledLimit;

import static dev.sluice.spi.algorithm.Arithmetic.ceilDiv;
import static dev.sluice.spi.algorithm.Arithmetic.floorDiv;
import static dev.sluice.spi.algorithm.Arithmetic.target;
import static dev.sluice.spi.algorithm.Arithmetic.untilGone;

/**
 * Sliding-window counter (Cloudflare's): counts {@code cur} of window {@code w} and {@code prev}
 * of window {@code w - 1}; the estimate at {@code e} microseconds into window {@code w} is
 * {@code prev * (W - e) / W + cur}, compared in integers as
 * {@code prev * (W - e) <= (count - cur - cost) * W}.
 *
 * <p>State, five longs: {@code [present (0 or 1), w, cur, prev, period]}, the last the period it
 * was written under. Invariant: {@code w} never decreases. Read under another count, the counts
 * stay; under another period, each old window's count goes to the new window that holds its start
 * (at most the count), until the old state has passed.
 */
public final class SlidingWindow extends Window {
    private static final int CUR = 2;
    private static final int PREV = 3;

    SlidingWindow(CompiledLimit limit) {
        super(limit);
    }

    @Override
    public long[] evaluate(long[] s, long now, long cost, long[] into, Verdict out) {
        long idx = floorDiv(now, window);
        long cw = idx;
        long cc = 0;
        long cp = 0;
        long gone = -1;
        if (s[PRESENT] != 0) {
            long sw = s[W];
            long sc = s[CUR];
            long sp = s[PREV];
            long wWindow = s[W_WINDOW];
            if (wWindow != window) {
                gone = (sw + 2) * wWindow;
                if (gone > now) {
                    long pw = floorDiv((sw - 1) * wWindow, window);
                    sw = floorDiv(sw * wWindow, window);
                    if (pw == sw) {
                        sc += sp;
                        sp = 0;
                    } else if (pw < sw - 1) {
                        sp = 0;
                    }
                    sc = Math.min(sc, count);
                    sp = Math.min(sp, count);
                } else {
                    sw = idx - 2;
                }
            }
            if (sw >= idx) {
                cw = sw;
                cc = sc;
                cp = sp;
            } else if (sw == idx - 1) {
                cp = sc;
            } else {
                gone = -1;
            }
        }
        long start = cw * window;
        long e = Math.max(0, now - start);
        long weighted = cp * (window - e);
        long room = count - cc - cost;
        boolean fits = room >= 0 && weighted <= room * window;
        if (out == null) {
            return fits ? s : null;
        }
        boolean commit = fits && into != null;
        long[] result = s;
        if (commit) {
            cc += cost;
            result = write(s, into, cw, cc, cp);
        }
        long remaining = Math.max(0, count - ceilDiv(weighted, window) - cc);
        long end = start + window;
        long retry = 0;
        if (!fits) {
            if (room >= 0) {
                retry = start + window - floorDiv(room * window, cp) - now;
            } else {
                long behind = cc == 0 ? 0 : Math.max(0, window - floorDiv((count - cost) * window, cc));
                retry = end + behind - now;
            }
        }
        // One unit more than remaining: while prev decays in this window, or else once cur has
        // become the previous window's count and decays in the next one.
        long next = 0;
        if (remaining < count) {
            long k = count - cc - remaining - 1;
            if (k >= 0 && cp > 0) {
                next = end - floorDiv(k * window, cp) - now;
            } else {
                next = end + Math.max(0, window - floorDiv((count - remaining - 1) * window, cc)) - now;
            }
        }
        out.set(fits, remaining, end - now, retry, end + window - now, next);
        out.fromMicros = Math.max(0, start - now);
        if (!commit) {
            untilGone(gone, now, out);
        }
        return result;
    }

    private long[] write(long[] s, long[] into, long w, long cur, long prev) {
        long[] next = target(s, into);
        next[PRESENT] = 1;
        next[W] = w;
        next[CUR] = cur;
        next[PREV] = prev;
        next[W_WINDOW] = window;
        return next;
    }

    @Override
    public long[] pause(long[] s, long now, long until, long[] into) {
        long last = floorDiv(until - 1, window);
        boolean same = samePeriod(s);
        long w = s[W];
        if (same && w > last) {
            // booked past the pause's end: the window before it counts full
            if (w == last + 1 && s[PREV] < count) {
                long[] next = target(s, into);
                next[PREV] = count;
                return next;
            }
            return s;
        }
        boolean at = same && w == last;
        return write(s, into, last, at ? Math.max(s[CUR], count) : count, at ? Math.max(s[PREV], count) : count);
    }

    @Override
    public long expiresAt(long[] s) {
        return (s[W] + 2) * s[W_WINDOW];
    }

    /**
     * Off the stored current count: this window's, or the previous one's when the caller has
     * not committed since the window turned; nothing once it is older.
     */
    @Override
    public long[] refund(long[] s, long now, long cost, long[] into) {
        if (!samePeriod(s) || s[W] < floorDiv(now, window) - 1) {
            return s;
        }
        long[] next = target(s, into);
        next[CUR] = Math.max(0, s[CUR] - cost);
        return next;
    }

    /** Off the count of the reservation's window: the stored current one, or the previous one. */
    @Override
    public long[] giveBack(long[] s, long now, long cost, long end, long endRem, long[] into) {
        if (!samePeriod(s) || s[W] != end && s[W] != end + 1) {
            return null;
        }
        long[] next = target(s, into);
        if (s[W] == end) {
            next[CUR] = Math.max(0, s[CUR] - cost);
        } else {
            next[PREV] = Math.max(0, s[PREV] - cost);
        }
        return next;
    }
}
