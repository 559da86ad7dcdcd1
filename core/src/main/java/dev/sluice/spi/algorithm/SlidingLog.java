package dev.sluice.spi.algorithm;

import dev.sluice.spi.CompiledLimit;

import static dev.sluice.spi.algorithm.Arithmetic.floorDiv;
import static dev.sluice.spi.algorithm.Arithmetic.target;
import static dev.sluice.spi.algorithm.Arithmetic.untilGone;

/**
 * Sliding log: one timestamp per admitted unit, oldest first, at most {@code count} of them after
 * each commit; an entry counts while {@code entry + W > t}, where {@code t = max(now, newest entry)}.
 *
 * <p>State, three longs and a ring of entries: {@code [size, period, head, ring...]}: how many
 * entries the ring holds from index {@code head} on (wrapping), and the period of the last commit.
 * The ring grows by doubling up to {@code count} entries, so a commit may answer a longer array
 * than the one given. Invariant: entries are non-decreasing; the newest never moves backwards. The
 * entries do not depend on the limit: read under another count or period they count as they are
 * (the log may hold more than the count), unless the period of the last commit has passed since
 * the newest entry.
 */
public final class SlidingLog extends RateAlgorithm {
    /** The length of an absent state: the ring has no room yet. */
    public static final int ABSENT_LENGTH = 3;
    private static final int SIZE = 0;
    private static final int W_WINDOW = 1;
    private static final int HEAD = 2;
    private static final int RING = 3;

    private final long count;
    private final long window;

    SlidingLog(CompiledLimit limit) {
        super(limit);
        this.count = limit.count();
        this.window = limit.periodMicros();
    }

    @Override
    public long[] absent() {
        return new long[ABSENT_LENGTH];
    }

    /** The {@code i}-th entry of {@code s}, oldest first. */
    private static long at(long[] s, long i) {
        return s[RING + (int) ((s[HEAD] + i) % (s.length - RING))];
    }

    @Override
    public long[] evaluate(long[] s, long now, long cost, long[] into, Verdict out) {
        long size = s[SIZE];
        long t = now;
        long expired = 0;
        long gone = -1;
        if (size > 0) {
            long newest = at(s, size - 1);
            if (s[W_WINDOW] != window) {
                gone = newest + s[W_WINDOW];
                if (gone <= now) {
                    expired = size;
                    gone = -1;
                }
            }
            if (expired < size) {
                t = Math.max(now, newest);
            }
        }
        while (expired < size && at(s, expired) + window <= t) {
            expired++;
        }
        long live = size - expired;
        boolean fits = live + cost <= count;
        if (out == null) {
            return fits ? s : null;
        }
        long retry = 0;
        if (!fits) {
            retry = at(s, expired + live + cost - count - 1) + window - now;
        }
        boolean commit = fits && into != null;
        long[] r = s;
        if (commit) {
            r = target(s, into);
            r[HEAD] = (r[HEAD] + expired) % Math.max(1, r.length - RING);
            r[SIZE] = size - expired;
            r = append(r, t, cost);
            r[W_WINDOW] = window;
            live += cost;
        }
        long kept = r[SIZE];
        long reset = kept == 0 || live == 0 ? 0 : at(r, kept - 1) + window - now;
        // One unit more than remaining: the oldest live entry leaves (after a commit the expired
        // ones are gone); a log holding more than the count (written under a larger one) must
        // first fall to count - 1 entries.
        long next = 0;
        if (kept > 0 && live > 0) {
            long oldest = commit ? 0 : expired + Math.max(0, live - count);
            next = at(r, oldest) + window - now;
        }
        out.set(fits, Math.max(0, count - live), reset, retry, reset, next);
        out.fromMicros = t - now;
        if (!commit) {
            untilGone(gone, now, out);
        }
        return r;
    }

    /** {@code s} with {@code n} entries at {@code t} appended: {@code s} itself, or a longer ring. */
    private long[] append(long[] s, long t, long n) {
        int size = (int) s[SIZE];
        int room = s.length - RING;
        long[] r = s;
        if (size + n > room) {
            r = new long[RING + (int) Math.min(count, Math.max(size + n, room * 2L))];
            for (int i = 0; i < size; i++) {
                r[RING + i] = at(s, i);
            }
            r[SIZE] = size;
            r[W_WINDOW] = s[W_WINDOW];
            room = r.length - RING;
        }
        long head = r[HEAD];
        for (int i = 0; i < n; i++) {
            r[RING + (int) ((head + size + i) % room)] = t;
        }
        r[SIZE] = size + n;
        return r;
    }

    /**
     * {@code count} entries, the i-th (from 1) at {@code until - window + i * window / count}
     * or the matching one of the newest entries kept, whichever is later.
     */
    @Override
    public long[] pause(long[] s, long now, long until, long[] into) {
        long size = s[SIZE];
        boolean same = size > 0 && s[W_WINDOW] == window;
        long[] paused = into != null && into.length == RING + count && into != s ? into : new long[RING + (int) count];
        for (int i = 0; i < count; i++) {
            long entry = until - window + floorDiv((i + 1) * window, count);
            long kept = size - count + i;
            if (same && kept >= 0 && at(s, kept) > entry) {
                entry = at(s, kept);
            }
            paused[RING + i] = entry;
        }
        paused[SIZE] = count;
        paused[W_WINDOW] = window;
        paused[HEAD] = 0;
        return paused;
    }

    @Override
    public long expiresAt(long[] s) {
        return s[SIZE] == 0 ? 0 : at(s, s[SIZE] - 1) + s[W_WINDOW];
    }

    @Override
    public boolean reservesAhead() {
        return false;
    }

    /** Drops the newest {@code cost} entries (all, if there are fewer). */
    @Override
    public long[] refund(long[] s, long now, long cost, long[] into) {
        if (s[SIZE] == 0 || s[W_WINDOW] != window) {
            return s;
        }
        long[] next = target(s, into);
        next[SIZE] = s[SIZE] - Math.min(s[SIZE], cost);
        return next;
    }

    @Override
    public void end(long[] s, long[] out, int at) {
        out[at] = s[SIZE] == 0 ? 0 : at(s, s[SIZE] - 1);
        out[at + 1] = 0;
    }

    /** As a refund, while the newest entry is the reservation's (entries of one instant are alike). */
    @Override
    public long[] giveBack(long[] s, long now, long cost, long end, long endRem, long[] into) {
        if (s[SIZE] == 0 || s[W_WINDOW] != window || at(s, s[SIZE] - 1) != end) {
            return null;
        }
        return refund(s, now, cost, into);
    }
}
