package dev.sluice.spi.algorithm;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The buckets divide by multiplying with a reciprocal and correcting: the quotients must be the
 * exact ones, for every size of numerator and divisor (the fallback included) and at the edges
 * where a double's estimate is furthest off.
 */
class DivisionTest {

    @Test
    void quotientsFromAReciprocalAreExact() {
        SplittableRandom random = new SplittableRandom(14);
        for (int i = 0; i < 2_000_000; i++) {
            long d = Math.max(1, random.nextLong() >>> random.nextInt(1, 64));
            long n = random.nextLong() >> random.nextInt(0, 64);
            check(n, d);
            // the neighbours of multiples, where rounding shows
            long q = random.nextLong(0, (1L << 53) / d + 1);
            for (long k = -2; k <= 2; k++) {
                check(q * d + k, d);
            }
        }
        for (long d : new long[] {1, 2, 3, 7, 1000, 999_999, 3_600_000_000L, (1L << 51) - 1, (1L << 53) - 1,
                1L << 53}) {
            for (long n : new long[] {0, 1, d - 1, d, d + 1, (1L << 53) - 1, 1L << 53, (1L << 53) + 1, -1, -d,
                    Long.MAX_VALUE, Long.MIN_VALUE + 1}) {
                check(n, d);
            }
        }
    }

    @Test
    void aRefillComparesWithoutOverflowing() {
        SplittableRandom random = new SplittableRandom(15);
        for (int i = 0; i < 1_000_000; i++) {
            long cap = random.nextLong(1, 1L << 51);
            long l = random.nextLong(0, cap + 1);
            long perMicro = random.nextLong(1, 1L << random.nextInt(1, 52));
            long elapsed = random.nextLong() >>> random.nextInt(1, 64);
            long missing = cap - l;
            long expected = missing > 0 ? (elapsed >= -Math.floorDiv(-missing, perMicro) ? cap : l + elapsed * perMicro)
                    : l;
            assertThat(Arithmetic.refill(l, cap, perMicro, elapsed))
                    .as("refill(%d, %d, %d, %d)", l, cap, perMicro, elapsed)
                    .isEqualTo(expected);
        }
    }

    private static void check(long n, long d) {
        double inverse = 1.0 / d;
        assertThat(Arithmetic.floorDiv(n, d, inverse)).as("floor %d / %d", n, d).isEqualTo(Math.floorDiv(n, d));
        assertThat(Arithmetic.ceilDiv(n, d, inverse)).as("ceil %d / %d", n, d).isEqualTo(-Math.floorDiv(-n, d));
    }
}
