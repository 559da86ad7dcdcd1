package dev.sluice.spi.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/** The token bucket's arithmetic, by a table in manual time: 2 per second, a burst of 2. */
class TokenBucketTest {

    @Test
    void twoPerSecondWithABurstOfTwo() {
        table(Algorithm.TOKEN_BUCKET);
    }

    @Test
    void aPauseEmptiesTheBucketAtItsEnd() {
        pause(Algorithm.TOKEN_BUCKET);
    }

    /** The table a bucket of this algorithm keeps: GCRA keeps the token bucket's. */
    static void table(Algorithm algorithm) {
        new Trace(limit(algorithm))
                .row(0, 1, true, 1, 0)
                .row(0, 1, true, 0, 0)
                .row(0, 1, false, 0, 500)
                // a refusal consumed nothing: a token comes back 500 ms after the last one went
                .row(250, 1, false, 0, 250)
                .row(500, 1, true, 0, 0)
                .refund(500, 1)
                .row(500, 1, true, 0, 0)
                // a long idle time refills to the burst, not beyond it
                .row(3_000, 2, true, 0, 0)
                .row(3_000, 1, false, 0, 500);
    }

    static void pause(Algorithm algorithm) {
        new Trace(limit(algorithm))
                .pause(0, 1_000)
                .row(1_000, 1, false, 0, 500)
                .row(1_500, 1, true, 0, 0);
    }

    private static Limit limit(Algorithm algorithm) {
        return Limit.of("table", 2, Duration.ofSeconds(1)).withBurst(2).withAlgorithm(algorithm);
    }
}
