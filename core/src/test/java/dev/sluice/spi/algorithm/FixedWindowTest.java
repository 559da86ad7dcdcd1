package dev.sluice.spi.algorithm;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/** The fixed window's arithmetic, by a table in manual time: 2 per second. */
class FixedWindowTest {

    private static final Limit LIMIT = Limit.of("table", 2, Duration.ofSeconds(1))
            .withAlgorithm(Algorithm.FIXED_WINDOW);

    @Test
    void twoPerSecondResetAtTheWindowsEdge() {
        new Trace(LIMIT)
                .row(0, 1, true, 1, 0)
                .row(100, 1, true, 0, 0)
                .row(200, 1, false, 0, 800)
                .refund(300, 1)
                .row(300, 1, true, 0, 0)
                .row(1_000, 2, true, 0, 0)
                .row(1_999, 1, false, 0, 1);
    }

    @Test
    void aPauseCountsFullEveryWindowStartingBeforeItsEnd() {
        new Trace(LIMIT)
                .pause(0, 2_500)
                .row(2_000, 1, false, 0, 1_000)
                .row(3_000, 1, true, 1, 0);
    }
}
