package dev.sluice.spi.algorithm;

import dev.sluice.spi.CompiledLimit;

/**
 * A fixed or sliding window: whole units counted in window number {@code w} of period-long windows
 * aligned to the epoch. A state is five longs, {@code [present (0 or 1), w, ..., period]}, the
 * last the period it was written under.
 */
abstract class Window extends RateAlgorithm {
    static final int LENGTH = 5;
    static final int PRESENT = 0;
    static final int W = 1;
    static final int W_WINDOW = 4;

    final long count;
    final long window;

    Window(CompiledLimit limit) {
        super(limit);
        this.count = limit.count();
        this.window = limit.periodMicros();
    }

    @Override
    public final long[] absent() {
        return new long[LENGTH];
    }

    /** Whether {@code s} is present and was written under this limit's period. */
    final boolean samePeriod(long[] s) {
        return s[PRESENT] != 0 && s[W_WINDOW] == window;
    }

    @Override
    public final void end(long[] s, long[] out, int at) {
        out[at] = s[W];
        out[at + 1] = 0;
    }
}
