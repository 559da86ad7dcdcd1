package dev.sluice.spi.algorithm;

import dev.sluice.Limit;
import dev.sluice.spi.CompiledLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A manual-time run of one algorithm's pure functions: each step decides at an instant (in
 * milliseconds after an instant aligned to every window used here) and commits into another array,
 * checking that the state it read was not written.
 */
final class Trace {
    /** A second boundary far from the epoch. */
    static final long T0 = 1_000_000L * 1_000_000L;

    final RateAlgorithm algorithm;
    long[] state;

    Trace(Limit limit) {
        this.algorithm = RateAlgorithm.of(CompiledLimit.of(limit));
        this.state = algorithm.absent();
    }

    static long at(long millis) {
        return T0 + millis * 1_000;
    }

    /** Decides {@code cost} at {@code millis} and commits if it fits; the verdict. */
    Verdict decide(long millis, long cost) {
        long[] read = state.clone();
        Verdict v = new Verdict();
        long[] next = algorithm.evaluate(state, at(millis), cost, new long[state.length], v);
        assertThat(state).as("the state read at %d ms", millis).isEqualTo(read);
        assertThat(algorithm.fits(state, at(millis), cost)).as("fits alone at %d ms", millis).isEqualTo(v.fits());
        state = next;
        return v;
    }

    /** Checks one row: at {@code millis}, {@code cost} fits or not, leaving {@code remaining}, retry in ms. */
    Trace row(long millis, long cost, boolean fits, long remaining, long retryMillis) {
        Verdict v = decide(millis, cost);
        String where = algorithm.limit() + " at " + millis + " ms, cost " + cost;
        assertThat(v.fits()).as(where + ": fits").isEqualTo(fits);
        assertThat(v.remaining()).as(where + ": remaining").isEqualTo(remaining);
        assertThat(v.retryMicros()).as(where + ": retry").isEqualTo(retryMillis * 1_000);
        return this;
    }

    /** Refunds {@code cost} at {@code millis} into a new array, checking the state read was not written. */
    Trace refund(long millis, long cost) {
        long[] read = state.clone();
        long[] before = state;
        state = algorithm.refund(state, at(millis), cost, null);
        assertThat(before).as("the state read by a refund").isEqualTo(read);
        return this;
    }

    /** Pauses from {@code millis} until {@code untilMillis}, into a new array. */
    Trace pause(long millis, long untilMillis) {
        long[] read = state.clone();
        long[] before = state;
        state = algorithm.pause(state, at(millis), at(untilMillis), null);
        assertThat(before).as("the state read by a pause").isEqualTo(read);
        return this;
    }
}
