package dev.sluice.memory;

import dev.sluice.spi.CompiledLimit;
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
 * <p>An instance evaluates under one limit's parameters, but its stored values remember the
 * parameters they were written under, like the fingerprint stored with each Redis key: when the
 * limit of its policy changes, {@link #under} carries the same stored values to the new
 * parameters, and {@link #evaluate} converts them exactly as the script does (what was used
 * carries over, clamped to the new limit, until the old state would have expired) until the
 * next commit writes them anew. Converting on every read rather than once keeps a rejection
 * from writing anything, and makes the answer depend only on what is stored and when.
 *
 * <p>Not thread-safe: the store holds the caller's lock around every call.
 */
abstract class LimitState {

    /** When this state becomes equal to an absent one, in store time; meaningless while absent. */
    long expiresAtMicros;

    /** The absent state of a limit: everything it needs per decision was derived once, in {@code limit}. */
    static LimitState absent(CompiledLimit limit) {
        return switch (limit.algorithm()) {
            case TOKEN_BUCKET -> new TokenBucket(limit);
            case GCRA -> new Gcra(limit);
            case FIXED_WINDOW -> new FixedWindow(limit.count(), limit.periodMicros());
            case SLIDING_WINDOW -> new SlidingWindow(limit.count(), limit.periodMicros());
            case SLIDING_LOG -> new SlidingLog(limit.count(), limit.periodMicros());
            case CONCURRENCY -> throw new IllegalArgumentException("concurrency is held as leases (LeaseTable), "
                    + "not as a rate state, got '" + limit + "'");
        };
    }

    /**
     * This state's stored values, evaluated from now on under {@code limit} (same algorithm,
     * other parameters); they are converted on each read and rewritten at the next commit.
     */
    LimitState under(CompiledLimit limit) {
        LimitState moved = absent(limit);
        moved.copyStored(this);
        moved.expiresAtMicros = expiresAtMicros;
        return moved;
    }

    /** Takes the stored values of {@code other}, a state of the same algorithm. */
    abstract void copyStored(LimitState other);

    /**
     * Decides {@code cost} units at {@code now}; with {@code commit} and a fit, consumes them.
     * Writes the outcome, after any consumption, to {@code out}; with {@code out} null (and no
     * commit) it only tells whether the cost fits, skipping the divisions the rest needs.
     *
     * @return whether the cost fits
     */
    abstract boolean evaluate(long now, long cost, boolean commit, Verdict out);

    /** Whether this state has never been written (an absent key). */
    abstract boolean isAbsent();

    /**
     * Gives back {@code cost} units spent under this state's parameters at {@code now}, as
     * {@code refund.lua} does: never beyond an absent state's budget, and nothing if the state was
     * written under other parameters or what it spent no longer counts (a window that has
     * passed). Its expiry stays: a refund can only bring the equality with an absent state sooner.
     */
    abstract void refund(long now, long cost);

    /**
     * Holds this state's budget spent until {@code until} (a provider's pause; {@code until > now}),
     * then lets it come back at its own pace, as {@code pause.lua} does: a bucket is empty at
     * {@code until} and refills from there; a window counts full every window that starts before
     * {@code until}; a log holds {@code count} entries leaving one by one from {@code until} on.
     * Never grants anything: a state already spent further ahead stays as it is. Sets the expiry.
     */
    abstract void pause(long now, long until);

    /**
     * Where this state's schedule ends, written to {@code out[at]} and {@code out[at + 1]}, as
     * {@code giveback.lua} compares it: a bucket's theoretical arrival time and remainder, a
     * window's index, a log's newest entry (then 0). Read right after a reservation's commit.
     */
    abstract void end(long[] out, int at);

    /**
     * Returns a reservation of {@code cost} units given up by its waiter at {@code now}, which
     * left this state's schedule ending at {@code end} and {@code endRem} (see {@link #end}; an
     * {@code endRem} of -1: it took a returned slot) and was to go at {@code slot}, as
     * {@code giveback.lua} does: a bucket moves its schedule's end back while it still ends there,
     * and otherwise keeps the slot for the next reservation ({@link ReturnedSlots}) while it is
     * still ahead and inside the schedule; a window while it still counts the reservation's window,
     * a log while its newest entry is the reservation's. Never under other parameters; the expiry
     * stays.
     */
    abstract void giveBack(long now, long cost, long end, long endRem, long slot);

    /**
     * Whether a reservation of {@code cost} may take a slot given up at {@code instant}: a bucket
     * written under the limit's units holding at least {@code cost} tokens returned there, that
     * instant still inside its schedule ({@link #covers}). Only buckets return slots.
     */
    boolean canTake(long instant, long cost) {
        return false;
    }

    /** Takes {@code cost} tokens of the slot returned at {@code instant}; see {@link #canTake}. */
    void take(long instant, long cost) {
        throw new IllegalStateException("only a bucket returns slots");
    }

    /** The slots returned to this state, or {@code null}: only a bucket has them. */
    ReturnedSlots returned() {
        return null;
    }

    /** Keeps {@code returned} as this bucket's returned slots; see {@link ReturnedSlots}. */
    void keepReturned(ReturnedSlots returned) {
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
     * A bucket's {@code returned} slots with {@code cost} tokens at {@code slot} added, given up at
     * {@code now} by a reservation whose schedule did not end there any more; unchanged unless the
     * slot is still ahead and inside the schedule ending at {@code end} and {@code endRem}.
     */
    static ReturnedSlots returnSlot(ReturnedSlots returned, long now, long cost, long slot, long end, long endRem,
                                    long perToken, long perMicro, long capacity) {
        if (slot < now || !covers(end, endRem, slot, cost * perToken, perMicro)) {
            return returned;
        }
        ReturnedSlots kept = returned != null && returned.sameUnits(perToken, perMicro, capacity) ? returned
                : new ReturnedSlots(perToken, perMicro, capacity);
        kept.add(now, slot, cost);
        return kept;
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
     * A token bucket or GCRA: the states whose schedule can keep slots given up inside it
     * ({@link ReturnedSlots}); each decides in {@link #canTake} whether its schedule still holds one.
     */
    abstract static class Bucket extends LimitState {
        /** Slots given up inside the schedule; {@code null}: none. */
        ReturnedSlots returned;

        @Override
        final void take(long instant, long cost) {
            returned.take(instant, cost);
        }

        @Override
        final ReturnedSlots returned() {
            return returned;
        }

        @Override
        final void keepReturned(ReturnedSlots returned) {
            this.returned = returned;
        }
    }

    /**
     * Token bucket in fixed-point units (see {@link Units}): {@code level} units at time {@code ts},
     * refilled lazily at {@code unitsPerMicro}, capped at {@code capacityUnits}.
     * Invariant: {@code ts} never decreases and {@code 0 <= level <= capacity} of the units it
     * was written under ({@code wPerToken}, {@code wPerMicro}, {@code wCapacity}). Read under
     * other units, the tokens used at {@code ts} carry over, clamped to the burst, and refill
     * at the new rate from {@code ts} on.
     */
    static final class TokenBucket extends Bucket {
        private final long perToken;
        private final long perMicro;
        private final long capacity;
        /** {@code 1.0 / perToken} and {@code 1.0 / perMicro}, for {@link #ceilDiv(long, long, double)}. */
        private final double byToken;
        private final double byMicro;
        private boolean present;
        private long level;
        private long ts;
        private long wPerToken;
        private long wPerMicro;
        private long wCapacity;

        TokenBucket(CompiledLimit limit) {
            this.perToken = limit.unitsPerToken();
            this.perMicro = limit.unitsPerMicro();
            this.capacity = limit.capacityUnits();
            this.byToken = 1.0 / perToken;
            this.byMicro = 1.0 / perMicro;
        }

        @Override
        void copyStored(LimitState other) {
            TokenBucket o = (TokenBucket) other;
            present = o.present;
            level = o.level;
            ts = o.ts;
            wPerToken = o.wPerToken;
            wPerMicro = o.wPerMicro;
            wCapacity = o.wCapacity;
            returned = o.returned == null ? null : o.returned.copy();
        }

        @Override
        boolean evaluate(long now, long cost, boolean commit, Verdict out) {
            long t = now;
            long l = capacity;
            long gone = -1;
            if (present) {
                t = Math.max(now, ts);
                l = level;
                if (wPerToken != perToken || wPerMicro != perMicro || wCapacity != capacity) {
                    gone = ts + ceilDiv(wCapacity - l, wPerMicro);
                    if (gone <= now) {
                        l = capacity;
                        gone = -1;
                    } else {
                        l = capacity - convertedDebt(wCapacity - l, wPerToken, perToken, capacity);
                    }
                }
                l = refill(l, capacity, perMicro, t - ts);
            }
            long need = cost * perToken;
            boolean fits = l >= need;
            if (out == null) {
                return fits;
            }
            if (fits && commit) {
                l -= need;
                level = l;
                ts = t;
                wPerToken = perToken;
                wPerMicro = perMicro;
                wCapacity = capacity;
                present = true;
            }
            long skew = t - now;
            long reset = skew + ceilDiv(capacity - l, perMicro, byMicro);
            long retry = fits ? 0 : skew + ceilDiv(need - l, perMicro, byMicro);
            long tokens = floorDiv(l, perToken, byToken);
            // the next whole token: (tokens + 1) tokens, reached by refilling from l
            long next = l >= capacity ? 0 : skew + ceilDiv((tokens + 1) * perToken - l, perMicro, byMicro);
            out.set(fits, tokens, reset, retry, reset, next);
            out.fromMicros = skew;
            if (!(fits && commit)) {
                untilGone(gone, now, out);
            }
            return fits;
        }

        @Override
        void pause(long now, long until) {
            boolean same = present && wPerToken == perToken && wPerMicro == perMicro && wCapacity == capacity;
            long t = present ? Math.max(ts, until) : until;
            long l = 0;
            if (same && ts > until && ceilDiv(level, perMicro) > ts - until) {
                // booked past the pause's end: the lower of the two buckets at ts
                l = (ts - until) * perMicro;
            } else if (same && ts > until) {
                l = level;
            }
            level = l;
            ts = t;
            wPerToken = perToken;
            wPerMicro = perMicro;
            wCapacity = capacity;
            present = true;
            returned = null; // a slot given up before the pause's end must not be sent in it
            expiresAtMicros = t + ceilDiv(capacity - l, perMicro);
        }

        @Override
        void refund(long now, long cost) {
            if (!present || wPerToken != perToken || wPerMicro != perMicro || wCapacity != capacity) {
                return;
            }
            long t = Math.max(now, ts);
            level = Math.min(capacity, refill(level, capacity, perMicro, t - ts) + cost * perToken);
            ts = t;
        }

        @Override
        void end(long[] out, int at) {
            long debt = capacity - level;
            long d = Math.floorDiv(debt, perMicro);
            out[at] = ts + d;
            out[at + 1] = debt - d * perMicro;
        }

        @Override
        void giveBack(long now, long cost, long end, long endRem, long slot) {
            if (!present || wPerToken != perToken || wPerMicro != perMicro || wCapacity != capacity) {
                return;
            }
            long[] back = endRem < 0 ? null
                    : givenBack(ts, capacity - level, perMicro, capacity, cost * perToken, end, endRem);
            if (back != null) {
                ts = back[0];
                level = capacity - back[1];
                return;
            }
            long[] e = new long[2];
            end(e, 0);
            returned = returnSlot(returned, now, cost, slot, e[0], e[1], perToken, perMicro, capacity);
        }

        @Override
        boolean canTake(long instant, long cost) {
            if (!present || returned == null || wPerToken != perToken || wPerMicro != perMicro || wCapacity != capacity
                    || !returned.sameUnits(perToken, perMicro, capacity) || returned.tokensAt(instant) < cost) {
                return false;
            }
            long[] e = new long[2];
            end(e, 0);
            return covers(e[0], e[1], instant, cost * perToken, perMicro);
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
     * both admit exactly the same requests. Invariant: the arrival time never decreases under
     * one set of units. It also keeps the time it was {@code written} and the units it was
     * written under: read under other units, the tokens owed when written carry over, clamped to
     * the burst, and drain at the new rate from then on, as the token bucket's do.
     */
    static final class Gcra extends Bucket {
        private final long perToken;
        private final long perMicro;
        private final long capacity;
        /** {@code 1.0 / perToken} and {@code 1.0 / perMicro}, for {@link #ceilDiv(long, long, double)}. */
        private final double byToken;
        private final double byMicro;
        /** {@code capacity / perMicro}: the longest delay within the capacity. */
        private final long longestDelay;
        private boolean present;
        private long tat;
        private long rem;
        private long written;
        private long wPerToken;
        private long wPerMicro;
        private long wCapacity;

        Gcra(CompiledLimit limit) {
            this.perToken = limit.unitsPerToken();
            this.perMicro = limit.unitsPerMicro();
            this.capacity = limit.capacityUnits();
            this.byToken = 1.0 / perToken;
            this.byMicro = 1.0 / perMicro;
            this.longestDelay = capacity / perMicro;
        }

        @Override
        void copyStored(LimitState other) {
            Gcra o = (Gcra) other;
            present = o.present;
            tat = o.tat;
            rem = o.rem;
            written = o.written;
            wPerToken = o.wPerToken;
            wPerMicro = o.wPerMicro;
            wCapacity = o.wCapacity;
            returned = o.returned == null ? null : o.returned.copy();
        }

        @Override
        boolean evaluate(long now, long cost, boolean commit, Verdict out) {
            long need = cost * perToken;
            long delay = -1;
            long r = 0;
            long gone = -1;
            if (present) {
                long at = tat;
                r = rem;
                if (wPerToken != perToken || wPerMicro != perMicro || wCapacity != capacity) {
                    gone = at + (r > 0 ? 1 : 0);
                    if (gone <= now) {
                        at = now - 1;
                        r = 0;
                        gone = -1;
                    } else {
                        long debt = convertedDebt((at - written) * wPerMicro + r, wPerToken, perToken, capacity);
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
                return fits;
            }
            if (fits && commit) {
                debt += need;
                delay = floorDiv(debt, perMicro, byMicro);
                r = debt - delay * perMicro;
                tat = now + delay;
                rem = r;
                written = now;
                wPerToken = perToken;
                wPerMicro = perMicro;
                wCapacity = capacity;
                present = true;
            }
            long reset = delay + (r > 0 ? 1 : 0);
            long remaining = overCapacity ? 0 : Math.max(0, floorDiv(capacity - debt, perToken, byToken));
            long retry = fits ? 0 : delay + ceilDiv(r + need - capacity, perMicro, byMicro);
            // debt must fall to capacity - (remaining + 1) tokens; written as retry is, from delay and r
            long next = !overCapacity && debt == 0 ? 0
                    : delay + ceilDiv(r + (remaining + 1) * perToken - capacity, perMicro, byMicro);
            out.set(fits, remaining, reset, retry, reset, next);
            out.fromMicros = 0; // a debt within the capacity may be spent now
            if (!(fits && commit)) {
                untilGone(gone, now, out);
            }
            return fits;
        }

        @Override
        void pause(long now, long until) {
            // the debt of a full bucket at until: nothing before, one token's time after it per token
            long pausedTat = until + capacity / perMicro;
            long pausedRem = capacity % perMicro;
            boolean same = present && wPerToken == perToken && wPerMicro == perMicro && wCapacity == capacity;
            if (!(same && (tat > pausedTat || tat == pausedTat && rem >= pausedRem))) {
                tat = pausedTat;
                rem = pausedRem;
                written = until;
                wPerToken = perToken;
                wPerMicro = perMicro;
                wCapacity = capacity;
                present = true;
            }
            returned = null; // a slot given up before the pause's end must not be sent in it
            expiresAtMicros = tat + (rem > 0 ? 1 : 0);
        }

        @Override
        void refund(long now, long cost) {
            if (!present || wPerToken != perToken || wPerMicro != perMicro || wCapacity != capacity || tat < now) {
                return; // written under other units, or nothing owed any more
            }
            long debt = Math.max(0, (tat - now) * perMicro + rem - cost * perToken);
            tat = now + debt / perMicro;
            rem = debt % perMicro;
            written = now;
        }

        @Override
        void end(long[] out, int at) {
            out[at] = tat;
            out[at + 1] = rem;
        }

        /** On the state as stored, {@code (written, owed)}, as giveback.lua reads it. */
        @Override
        void giveBack(long now, long cost, long end, long endRem, long slot) {
            if (!present || wPerToken != perToken || wPerMicro != perMicro || wCapacity != capacity) {
                return;
            }
            long[] back = endRem < 0 ? null : givenBack(written, (tat - written) * perMicro + rem, perMicro, capacity,
                    cost * perToken, end, endRem);
            if (back != null) {
                written = back[0];
                long d = back[1] / perMicro;
                tat = written + d;
                rem = back[1] - d * perMicro;
                return;
            }
            returned = returnSlot(returned, now, cost, slot, tat, rem, perToken, perMicro, capacity);
        }

        @Override
        boolean canTake(long instant, long cost) {
            return present && returned != null && wPerToken == perToken && wPerMicro == perMicro && wCapacity == capacity
                    && returned.sameUnits(perToken, perMicro, capacity) && returned.tokensAt(instant) >= cost
                    && covers(tat, rem, instant, cost * perToken, perMicro);
        }

        @Override
        boolean isAbsent() {
            return !present;
        }
    }

    /**
     * Fixed window: {@code n} units counted in window number {@code w} of {@code wWindow}-long
     * windows (aligned to the epoch). Invariant: {@code w} never decreases; a clock behind the
     * stored window counts into the stored window. Read under another period, the count stays
     * in the new window that holds the old window's start, until the old window ends.
     */
    static final class FixedWindow extends LimitState {
        private final long count;
        private final long window;
        private boolean present;
        private long w;
        private long n;
        private long wCount;
        private long wWindow;

        FixedWindow(long count, long window) {
            this.count = count;
            this.window = window;
        }

        @Override
        void copyStored(LimitState other) {
            FixedWindow o = (FixedWindow) other;
            present = o.present;
            w = o.w;
            n = o.n;
            wCount = o.wCount;
            wWindow = o.wWindow;
        }

        @Override
        boolean evaluate(long now, long cost, boolean commit, Verdict out) {
            long idx = floorDiv(now, window);
            long cw = idx;
            long cn = 0;
            long gone = -1;
            if (present) {
                long sw = w;
                if (wCount != count || wWindow != window) {
                    gone = (sw + 1) * wWindow;
                    sw = gone > now ? floorDiv(sw * wWindow, window) : idx - 1;
                }
                if (sw >= idx) {
                    cw = sw;
                    cn = n;
                } else {
                    gone = -1;
                }
            }
            boolean fits = cn + cost <= count;
            if (out == null) {
                return fits;
            }
            if (fits && commit) {
                cn += cost;
                w = cw;
                n = cn;
                wCount = count;
                wWindow = window;
                present = true;
            }
            long reset = (cw + 1) * window - now;
            // counted units come back all at once, when the window ends
            out.set(fits, Math.max(0, count - cn), reset, fits ? 0 : reset, reset, cn == 0 ? 0 : reset);
            out.fromMicros = Math.max(0, cw * window - now);
            if (!(fits && commit)) {
                untilGone(gone, now, out);
            }
            return fits;
        }

        @Override
        void pause(long now, long until) {
            long last = floorDiv(until - 1, window);
            boolean same = present && wWindow == window;
            if (same && w > last) {
                return; // booked past the pause's end
            }
            n = same && w == last ? Math.max(n, count) : count;
            w = last;
            wCount = count;
            wWindow = window;
            present = true;
            expiresAtMicros = (last + 1) * window;
        }

        @Override
        void refund(long now, long cost) {
            if (present && wWindow == window && w >= floorDiv(now, window)) {
                n = Math.max(0, n - cost);
            }
        }

        @Override
        void end(long[] out, int at) {
            out[at] = w;
            out[at + 1] = 0;
        }

        /** Off the count of the reservation's window, while it is the stored one. */
        @Override
        void giveBack(long now, long cost, long end, long endRem, long slot) {
            if (present && wWindow == window && w == end) {
                n = Math.max(0, n - cost);
            }
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
     * Read under another count, the counts stay; under another period, each old window's count
     * goes to the new window that holds its start (at most the count), until the old state
     * has passed.
     */
    static final class SlidingWindow extends LimitState {
        private final long count;
        private final long window;
        private boolean present;
        private long w;
        private long cur;
        private long prev;
        private long wWindow;

        SlidingWindow(long count, long window) {
            this.count = count;
            this.window = window;
        }

        @Override
        void copyStored(LimitState other) {
            SlidingWindow o = (SlidingWindow) other;
            present = o.present;
            w = o.w;
            cur = o.cur;
            prev = o.prev;
            wWindow = o.wWindow;
        }

        @Override
        boolean evaluate(long now, long cost, boolean commit, Verdict out) {
            long idx = floorDiv(now, window);
            long cw = idx;
            long cc = 0;
            long cp = 0;
            long gone = -1;
            if (present) {
                long sw = w;
                long sc = cur;
                long sp = prev;
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
                return fits;
            }
            if (fits && commit) {
                cc += cost;
                w = cw;
                cur = cc;
                prev = cp;
                wWindow = window;
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
            out.fromMicros = Math.max(0, start - now);
            if (!(fits && commit)) {
                untilGone(gone, now, out);
            }
            return fits;
        }

        @Override
        void pause(long now, long until) {
            long last = floorDiv(until - 1, window);
            boolean same = present && wWindow == window;
            if (same && w > last) {
                // booked past the pause's end: the window before it counts full
                if (w == last + 1) {
                    prev = Math.max(prev, count);
                }
                return;
            }
            cur = same && w == last ? Math.max(cur, count) : count;
            prev = same && w == last ? Math.max(prev, count) : count;
            w = last;
            wWindow = window;
            present = true;
            expiresAtMicros = (last + 2) * window;
        }

        /**
         * Off the stored current count: this window's, or the previous one's when the caller has
         * not committed since the window turned; nothing once it is older.
         */
        @Override
        void refund(long now, long cost) {
            if (present && wWindow == window && w >= floorDiv(now, window) - 1) {
                cur = Math.max(0, cur - cost);
            }
        }

        @Override
        void end(long[] out, int at) {
            out[at] = w;
            out[at + 1] = 0;
        }

        /** Off the count of the reservation's window: the stored current one, or the previous one. */
        @Override
        void giveBack(long now, long cost, long end, long endRem, long slot) {
            if (present && wWindow == window && w == end) {
                cur = Math.max(0, cur - cost);
            } else if (present && wWindow == window && w == end + 1) {
                prev = Math.max(0, prev - cost);
            }
        }

        @Override
        boolean isAbsent() {
            return !present;
        }
    }

    /**
     * Sliding log: one timestamp per admitted unit, oldest first, at most {@code count} of them
     * after each commit; an entry counts while {@code entry + W > t}, where
     * {@code t = max(now, newest entry)}. Invariant: entries are non-decreasing; the newest
     * never moves backwards. The entries do not depend on the limit: read under another count
     * or window they count as they are (the log may hold more than the count), unless the
     * window of the last commit ({@code wWindow}) has passed since the newest entry.
     */
    static final class SlidingLog extends LimitState {
        private final long count;
        private final long window;
        private long[] ring = new long[0];
        private int head;
        private int size;
        private long wWindow;

        SlidingLog(long count, long window) {
            this.count = count;
            this.window = window;
        }

        @Override
        void copyStored(LimitState other) {
            SlidingLog o = (SlidingLog) other;
            ring = o.ring;
            head = o.head;
            size = o.size;
            wWindow = o.wWindow;
        }

        private long at(int i) {
            return ring[(head + i) % ring.length];
        }

        @Override
        boolean evaluate(long now, long cost, boolean commit, Verdict out) {
            long t = now;
            int expired = 0;
            long gone = -1;
            if (size > 0) {
                long newest = at(size - 1);
                if (wWindow != window) {
                    gone = newest + wWindow;
                    if (gone <= now) {
                        expired = size;
                        gone = -1;
                    }
                }
                if (expired < size) {
                    t = Math.max(now, newest);
                }
            }
            while (expired < size && at(expired) + window <= t) {
                expired++;
            }
            long live = size - expired;
            boolean fits = live + cost <= count;
            if (out == null) {
                return fits;
            }
            long retry = 0;
            if (!fits) {
                retry = at((int) (expired + live + cost - count - 1)) + window - now;
            }
            if (fits && commit) {
                head = (head + expired) % Math.max(1, ring.length);
                size -= expired;
                append(t, (int) cost);
                live += cost;
                wWindow = window;
            }
            long reset = size == 0 || live == 0 ? 0 : at(size - 1) + window - now;
            // One unit more than remaining: the oldest live entry leaves (after a commit the expired
            // ones are gone); a log holding more than the count (written under a larger one) must
            // first fall to count - 1 entries.
            long next = 0;
            if (size > 0 && live > 0) {
                long oldest = fits && commit ? 0 : expired + Math.max(0, live - count);
                next = at((int) oldest) + window - now;
            }
            out.set(fits, Math.max(0, count - live), reset, retry, reset, next);
            out.fromMicros = t - now;
            if (!(fits && commit)) {
                untilGone(gone, now, out);
            }
            return fits;
        }

        /**
         * {@code count} entries, the i-th (from 1) at {@code until - window + i * window / count}
         * or the matching one of the newest entries kept, whichever is later.
         */
        @Override
        void pause(long now, long until) {
            boolean same = size > 0 && wWindow == window;
            long[] paused = new long[(int) count];
            for (int i = 0; i < count; i++) {
                paused[i] = until - window + floorDiv((i + 1) * window, count);
                int kept = (int) (size - count + i);
                if (same && kept >= 0 && at(kept) > paused[i]) {
                    paused[i] = at(kept);
                }
            }
            ring = paused;
            head = 0;
            size = paused.length;
            wWindow = window;
            expiresAtMicros = paused[size - 1] + window;
        }

        /** Drops the newest {@code cost} entries (all, if there are fewer). */
        @Override
        void refund(long now, long cost) {
            if (size > 0 && wWindow == window) {
                size -= (int) Math.min(size, cost);
            }
        }

        @Override
        void end(long[] out, int at) {
            out[at] = size == 0 ? 0 : at(size - 1);
            out[at + 1] = 0;
        }

        /** As a refund, while the newest entry is the reservation's (entries of one instant are alike). */
        @Override
        void giveBack(long now, long cost, long end, long endRem, long slot) {
            if (size > 0 && wWindow == window && at(size - 1) == end) {
                size -= (int) Math.min(size, cost);
            }
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
