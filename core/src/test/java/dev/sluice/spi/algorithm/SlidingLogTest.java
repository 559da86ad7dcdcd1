package dev.sluice.spi.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/** The sliding log's arithmetic, by a table in manual time: 2 per second. */
class SlidingLogTest {

    private static final Limit LIMIT = Limit.of("table", 2, Duration.ofSeconds(1)).withAlgorithm(Algorithm.SLIDING_LOG);

    @Test
    void twoPerSecondExactly() {
        new Trace(LIMIT)
                .row(0, 1, true, 1, 0)
                .row(100, 1, true, 0, 0)
                .row(200, 1, false, 0, 800)
                // a refund drops the newest entry
                .refund(300, 1)
                .row(300, 1, true, 0, 0)
                .row(1_000, 1, true, 0, 0)
                .row(1_100, 1, false, 0, 200);
    }

    @Test
    void aPauseLeavesEntriesThatGoOneByOneFromItsEnd() {
        new Trace(LIMIT)
                .pause(0, 1_000)
                .row(1_000, 1, false, 0, 500)
                .row(1_500, 1, true, 0, 0);
    }
}
