package dev.sluice.spi.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.spi.CompiledLimit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What every algorithm's arithmetic promises a store: writing in place (the memory store) and into
 * a new array (a compare-and-swap store) give the same states and verdicts, and an absent state is
 * all zeros.
 */
class RateAlgorithmTest {

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void writingInPlaceAndIntoANewArrayAgree(Algorithm algorithm) {
        SplittableRandom random = new SplittableRandom(algorithm.ordinal());
        Limit limit = Limit.of("agree", 7, Duration.ofSeconds(3)).withAlgorithm(algorithm);
        RateAlgorithm math = RateAlgorithm.of(CompiledLimit.of(limit));
        long[] inPlace = math.absent();
        long[] copied = math.absent();
        long now = Trace.T0;
        for (int step = 0; step < 2_000; step++) {
            now += random.nextLong(600_000);
            long cost = 1 + random.nextInt(3);
            int what = random.nextInt(10);
            if (what == 0) {
                inPlace = math.refund(inPlace, now, cost, inPlace);
                copied = math.refund(copied, now, cost, null);
            } else if (what == 1) {
                long until = now + 1 + random.nextLong(4_000_000);
                inPlace = math.pause(inPlace, now, until, inPlace);
                copied = math.pause(copied, now, until, null);
                assertThat(math.expiresAt(inPlace)).isEqualTo(math.expiresAt(copied)).isGreaterThanOrEqualTo(until);
            } else {
                Verdict a = new Verdict();
                Verdict b = new Verdict();
                long[] read = copied.clone();
                long[] written = math.evaluate(inPlace, now, cost, inPlace, a);
                long[] next = math.evaluate(copied, now, cost, new long[copied.length], b);
                assertThat(b.fits()).as("step %d", step).isEqualTo(a.fits());
                assertThat(copied).as("step %d: the state read", step).isEqualTo(read);
                assertThat(numbers(a)).as("step %d", step).isEqualTo(numbers(b));
                inPlace = written;
                copied = next;
            }
            assertThat(entries(math, inPlace)).as("step %d", step).isEqualTo(entries(math, copied));
        }
    }

    private static long[] numbers(Verdict v) {
        return new long[] {v.remaining(), v.resetMicros(), v.retryMicros(), v.nextMicros(), v.ttlMicros(),
                v.fromMicros()};
    }

    /** The state's schedule end, which every algorithm reads from its stored values. */
    private static long[] entries(RateAlgorithm math, long[] state) {
        long[] end = new long[2];
        math.end(state, end, 0);
        return new long[] {RateAlgorithm.isAbsent(state) ? 0 : 1, end[0], end[1]};
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void anAbsentStateIsAllZeros(Algorithm algorithm) {
        long[] absent = RateAlgorithm.of(CompiledLimit.of(Limit.of("absent", 3, Duration.ofSeconds(1))
                .withAlgorithm(algorithm))).absent();
        assertThat(absent).containsOnly(0L);
        assertThat(RateAlgorithm.isAbsent(absent)).isTrue();
    }

    @Test
    void concurrencyHasNoRateArithmetic() {
        assertThatThrownBy(() -> RateAlgorithm.of(CompiledLimit.of(Limit.concurrency("cap", 2, Duration.ofSeconds(5)))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("concurrency");
    }

    @Test
    void returnedSlotsRoundTripThroughLongs() {
        ReturnedSlots slots = ReturnedSlots.none(3, 2, 30).add(10, 40, 1).add(10, 20, 2).add(10, 40, 1);
        assertThat(slots.toLongs()).containsExactly(3, 2, 30, 20, 2, 40, 2);
        assertThat(ReturnedSlots.fromLongs(slots.toLongs()).toLongs()).isEqualTo(slots.toLongs());
        assertThat(slots.take(40, 2).toLongs()).containsExactly(3, 2, 30, 20, 2);
        assertThatThrownBy(() -> ReturnedSlots.fromLongs(new long[] {1, 2})).hasMessageContaining("'encoded'");
    }
}
