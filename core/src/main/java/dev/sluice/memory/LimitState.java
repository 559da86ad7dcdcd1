package dev.sluice.memory;

import dev.sluice.Limit;
import dev.sluice.internal.Units;

/**
 * One caller's state under one limit: the Java twin of one algorithm in {@code decide.lua}.
 *
 * <p>Each algorithm is a function of (state, now, limit, cost) in integer microseconds, written
 * line for line like its Lua form so that the conformance suite can hold both to identical
 * decisions. {@link #evaluate} reads the state as of {@code now}; only with {@code commit} does
 * it consume the cost, so that a request rejected by any limit changes no state at all. A fresh
 * instance is the <em>absent</em> state (a key that does not exist in Redis).
 *
 * <p>Not thread-safe: the store holds the caller's lock around every call.
 */
abstract class LimitState {

    /** When this state becomes equal to an absent one, in store time; meaningless while absent. */
    long expiresAtMicros;

    static LimitState absent(Limit limit) {
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET -> new TokenBucket(Units.of(limit));
            case GCRA -> new Gcra(Units.of(limit));
            case FIXED_WINDOW -> new FixedWindow(limit.count(), limit.periodMicros());
            case SLIDING_WINDOW -> new SlidingWindow(limit.count(), limit.periodMicros());
            case SLIDING_LOG -> new SlidingLog(limit.count(), limit.periodMicros());
        };
    }

    /**
     * The longest time a state of this limit can stay different from an absent one: a bucket's
     * time to refill from empty, a sliding window's two windows, a window's or log's period.
     */
    static long longestTtlMicros(Limit limit) {
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> {
                Units units = Units.of(limit);
                yield ceilDiv(units.capacityUnits(), units.unitsPerMicro()) + 1;
            }
            case SLIDING_WINDOW -> 2 * limit.periodMicros();
            case FIXED_WINDOW, SLIDING_LOG -> limit.periodMicros();
        };
    }

    /**
     * Decides {@code cost} units at {@code now}; with {@code commit} and a fit, consumes them.
     * Writes the outcome, after any consumption, to {@code out}.
     */
    abstract void evaluate(long now, long cost, boolean commit, Verdict out);

    /** Whether this state has never been written (an absent key). */
    abstract boolean isAbsent();

    static long floorDiv(long a, long b) {
        return Math.floorDiv(a, b);
    }

    static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }

    /**
     * Token bucket in fixed-point units (see {@link Units}): {@code level} units at time {@code ts},
     * refilled lazily at {@code unitsPerMicro}, capped at {@code capacityUnits}.
     * Invariant: {@code ts} never decreases and {@code 0 <= level <= capacity}.
     */
    static final class TokenBucket extends LimitState {
        private final long perToken;
        private final long perMicro;
        private final long capacity;
        private boolean present;
        private long level;
        private long ts;

        TokenBucket(Units units) {
            this.perToken = units.unitsPerToken();
            this.perMicro = units.unitsPerMicro();
            this.capacity = units.capacityUnits();
        }

        @Override
        void evaluate(long now, long cost, boolean commit, Verdict out) {
            long t = now;
            long l = capacity;
            if (present) {
                t = Math.max(now, ts);
                l = level;
                long missing = capacity - l;
                if (missing > 0) {
                    long elapsed = t - ts;
                    l = elapsed >= ceilDiv(missing, perMicro) ? capacity : l + elapsed * perMicro;
                }
            }
            long need = cost * perToken;
            boolean fits = l >= need;
            if (fits && commit) {
                l -= need;
                level = l;
                ts = t;
                present = true;
            }
            long skew = t - now;
            long reset = skew + ceilDiv(capacity - l, perMicro);
            long retry = fits ? 0 : skew + ceilDiv(need - l, perMicro);
            // the next whole token: (l / perToken + 1) tokens, reached by refilling from l
            long next = l >= capacity ? 0 : skew + ceilDiv((l / perToken + 1) * perToken - l, perMicro);
            out.set(fits, l / perToken, reset, retry, reset, next);
        }

        @Override
        boolean isAbsent() {
            return !present;
        }
    }

    /**
     * GCRA: one theoretical arrival time, kept exactly as {@code tat + rem / unitsPerMicro}
     * microseconds ({@code 0 <= rem < unitsPerMicro}); the caller's debt at {@code now} is
     * {@code (tat - now) * unitsPerMicro + rem} units, and a request fits while debt plus its units
     * stay within the capacity. This is the token bucket with {@code level = capacity - debt}, so
     * both admit exactly the same requests. Invariant: the arrival time never decreases.
     */
    static final class Gcra extends LimitState {
        private final long perToken;
        private final long perMicro;
        private final long capacity;
        private boolean present;
        private long tat;
        private long rem;

        Gcra(Units units) {
            this.perToken = units.unitsPerToken();
            this.perMicro = units.unitsPerMicro();
            this.capacity = units.capacityUnits();
        }

        @Override
        void evaluate(long now, long cost, boolean commit, Verdict out) {
            long need = cost * perToken;
            long delay = present ? tat - now : -1;
            long r = present ? rem : 0;
            if (delay < 0) {
                delay = 0; // the arrival time has passed: no debt
                r = 0;
            }
            boolean overCapacity = delay > capacity / perMicro;
            long debt = overCapacity ? capacity + 1 : delay * perMicro + r;
            boolean fits = !overCapacity && debt + need <= capacity;
            if (fits && commit) {
                debt += need;
                delay = debt / perMicro;
                r = debt % perMicro;
                tat = now + delay;
                rem = r;
                present = true;
            }
            long reset = delay + (r > 0 ? 1 : 0);
            long remaining = overCapacity ? 0 : Math.max(0, floorDiv(capacity - debt, perToken));
            long retry = fits ? 0 : delay + ceilDiv(r + need - capacity, perMicro);
            // debt must fall to capacity - (remaining + 1) tokens; written as retry is, from delay and r
            long next = !overCapacity && debt == 0 ? 0
                    : delay + ceilDiv(r + (remaining + 1) * perToken - capacity, perMicro);
            out.set(fits, remaining, reset, retry, reset, next);
        }

        @Override
        boolean isAbsent() {
            return !present;
        }
    }

    /**
     * Fixed window: {@code n} units counted in window number {@code w} (windows are aligned to
     * the epoch). Invariant: {@code w} never decreases; a clock behind the stored window counts
     * into the stored window.
     */
    static final class FixedWindow extends LimitState {
        private final long count;
        private final long window;
        private boolean present;
        private long w;
        private long n;

        FixedWindow(long count, long window) {
            this.count = count;
            this.window = window;
        }

        @Override
        void evaluate(long now, long cost, boolean commit, Verdict out) {
            long idx = floorDiv(now, window);
            long cw = idx;
            long cn = 0;
            if (present && w >= idx) {
                cw = w;
                cn = n;
            }
            boolean fits = cn + cost <= count;
            if (fits && commit) {
                cn += cost;
                w = cw;
                n = cn;
                present = true;
            }
            long reset = (cw + 1) * window - now;
            out.set(fits, count - cn, reset, fits ? 0 : reset, reset, cn == 0 ? 0 : reset);
        }

        @Override
        boolean isAbsent() {
            return !present;
        }
    }

    /**
     * Sliding-window counter (Cloudflare's): counts {@code cur} of window {@code w} and
     * {@code prev} of window {@code w - 1}; the estimate at {@code e} microseconds into window
     * {@code w} is {@code prev * (W - e) / W + cur}, compared in integers as
     * {@code prev * (W - e) <= (count - cur - cost) * W}. Invariant: {@code w} never decreases.
     */
    static final class SlidingWindow extends LimitState {
        private final long count;
        private final long window;
        private boolean present;
        private long w;
        private long cur;
        private long prev;

        SlidingWindow(long count, long window) {
            this.count = count;
            this.window = window;
        }

        @Override
        void evaluate(long now, long cost, boolean commit, Verdict out) {
            long idx = floorDiv(now, window);
            long cw = idx;
            long cc = 0;
            long cp = 0;
            if (present) {
                if (w >= idx) {
                    cw = w;
                    cc = cur;
                    cp = prev;
                } else if (w == idx - 1) {
                    cp = cur;
                }
            }
            long start = cw * window;
            long e = Math.max(0, now - start);
            long weighted = cp * (window - e);
            long room = count - cc - cost;
            boolean fits = room >= 0 && weighted <= room * window;
            if (fits && commit) {
                cc += cost;
                w = cw;
                cur = cc;
                prev = cp;
                present = true;
            }
            long remaining = Math.max(0, count - ceilDiv(weighted, window) - cc);
            long end = start + window;
            long retry = 0;
            if (!fits) {
                if (room >= 0) {
                    retry = start + window - floorDiv(room * window, cp) - now;
                } else {
                    long into = cc == 0 ? 0 : Math.max(0, window - floorDiv((count - cost) * window, cc));
                    retry = end + into - now;
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
        }

        @Override
        boolean isAbsent() {
            return !present;
        }
    }

    /**
     * Sliding log: one timestamp per admitted unit, oldest first, at most {@code count} of them;
     * an entry counts while {@code entry + W > t}, where {@code t = max(now, newest entry)}.
     * Invariant: entries are non-decreasing; the newest never moves backwards.
     */
    static final class SlidingLog extends LimitState {
        private final long count;
        private final long window;
        private long[] ring = new long[0];
        private int head;
        private int size;

        SlidingLog(long count, long window) {
            this.count = count;
            this.window = window;
        }

        private long at(int i) {
            return ring[(head + i) % ring.length];
        }

        @Override
        void evaluate(long now, long cost, boolean commit, Verdict out) {
            long t = size == 0 ? now : Math.max(now, at(size - 1));
            int expired = 0;
            while (expired < size && at(expired) + window <= t) {
                expired++;
            }
            long live = size - expired;
            boolean fits = live + cost <= count;
            long retry = 0;
            if (!fits) {
                retry = at((int) (expired + live + cost - count - 1)) + window - now;
            }
            if (fits && commit) {
                head = (head + expired) % Math.max(1, ring.length);
                size -= expired;
                append(t, (int) cost);
                live += cost;
            }
            long reset = size == 0 || live == 0 ? 0 : at(size - 1) + window - now;
            // the oldest live entry leaves first (after a commit the expired ones are gone)
            long next = size == 0 || live == 0 ? 0 : at(fits && commit ? 0 : expired) + window - now;
            out.set(fits, count - live, reset, retry, reset, next);
        }

        private void append(long t, int n) {
            if (size + n > ring.length) {
                long[] grown = new long[(int) Math.min(count, Math.max(size + n, ring.length * 2L))];
                for (int i = 0; i < size; i++) {
                    grown[i] = at(i);
                }
                ring = grown;
                head = 0;
            }
            for (int i = 0; i < n; i++) {
                ring[(head + size + i) % ring.length] = t;
            }
            size += n;
        }

        @Override
        boolean isAbsent() {
            return size == 0;
        }
    }
}
