package dev.sluice.spi.algorithm;

import dev.sluice.spi.CompiledLimit;

import static dev.sluice.spi.algorithm.Arithmetic.covers;

/**
 * A token bucket or GCRA: fixed-point units (see {@code Units}), the units a state was written
 * under at indexes {@link #W_PER_TOKEN}, {@link #W_PER_MICRO} and {@link #W_CAPACITY}, and a
 * schedule that can keep slots given up inside it ({@link ReturnedSlots}).
 */
abstract class Bucket extends RateAlgorithm {
    static final int PRESENT = 0;
    static final int W_PER_TOKEN = 3;
    static final int W_PER_MICRO = 4;
    static final int W_CAPACITY = 5;

    final long perToken;
    final long perMicro;
    final long capacity;
    /** {@code 1.0 / perToken} and {@code 1.0 / perMicro}, for {@link Arithmetic#ceilDiv(long, long, double)}. */
    final double byToken;
    final double byMicro;

    Bucket(CompiledLimit limit) {
        super(limit);
        this.perToken = limit.unitsPerToken();
        this.perMicro = limit.unitsPerMicro();
        this.capacity = limit.capacityUnits();
        this.byToken = 1.0 / perToken;
        this.byMicro = 1.0 / perMicro;
    }

    /** Whether {@code s} is present and was written under this limit's units. */
    final boolean sameUnits(long[] s) {
        return s[PRESENT] != 0 && s[W_PER_TOKEN] == perToken && s[W_PER_MICRO] == perMicro && s[W_CAPACITY] == capacity;
    }

    /** Marks {@code next} present, written under this limit's units. */
    final void written(long[] next) {
        next[PRESENT] = 1;
        next[W_PER_TOKEN] = perToken;
        next[W_PER_MICRO] = perMicro;
        next[W_CAPACITY] = capacity;
    }

    @Override
    public final ReturnedSlots returnSlot(long[] state, ReturnedSlots slots, long now, long cost, long slot) {
        if (!sameUnits(state)) {
            return slots;
        }
        long[] e = new long[2];
        end(state, e, 0);
        if (slot < now || !covers(e[0], e[1], slot, cost * perToken, perMicro)) {
            return slots;
        }
        ReturnedSlots kept = slots != null && slots.sameUnits(perToken, perMicro, capacity) ? slots
                : ReturnedSlots.none(perToken, perMicro, capacity);
        return kept.add(now, slot, cost);
    }

    @Override
    public final boolean canTake(long[] state, ReturnedSlots slots, long instant, long cost) {
        if (!sameUnits(state) || slots == null || !slots.sameUnits(perToken, perMicro, capacity)
                || slots.tokensAt(instant) < cost) {
            return false;
        }
        long[] e = new long[2];
        end(state, e, 0);
        return covers(e[0], e[1], instant, cost * perToken, perMicro);
    }

    @Override
    public final ReturnedSlots take(long[] state, ReturnedSlots slots, long instant, long cost, Verdict out) {
        evaluate(state, instant, cost, null, out);
        out.fits = true;
        out.retryMicros = 0;
        return slots.take(instant, cost);
    }
}
