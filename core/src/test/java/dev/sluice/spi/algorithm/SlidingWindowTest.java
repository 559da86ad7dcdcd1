package dev.sluice.spi.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/** The sliding window's arithmetic, by a table in manual time: 2 per second. */
class SlidingWindowTest {

    private static final Limit LIMIT = Limit.of("table", 2, Duration.ofSeconds(1))
            .withAlgorithm(Algorithm.SLIDING_WINDOW);

    @Test
    void twoPerSecondWithThePreviousWindowWeighted() {
        new Trace(LIMIT)
                .row(0, 1, true, 1, 0)
                .row(100, 1, true, 0, 0)
                // the previous window's 2 weigh 1 from half-way through the next one
                .row(200, 1, false, 0, 1_300)
                .row(1_500, 1, true, 0, 0)
                .refund(1_500, 1)
                .row(1_500, 1, true, 0, 0)
                .row(1_600, 1, false, 0, 400);
    }

    @Test
    void aPauseCountsTheWindowBeforeItsEndFull() {
        new Trace(LIMIT)
                .pause(0, 1_500)
                .row(1_500, 1, false, 0, 1_000)
                .row(2_500, 1, true, 0, 0);
    }
}
