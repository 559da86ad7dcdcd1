package dev.sluice.spi.algorithm;

import dev.sluice.Algorithm;
import org.junit.jupiter.api.Test;

/** GCRA's arithmetic keeps the token bucket's table (see {@link TokenBucketTest}) in one time value. */
class GcraTest {

    @Test
    void twoPerSecondWithABurstOfTwo() {
        TokenBucketTest.table(Algorithm.GCRA);
    }

    @Test
    void aPauseEmptiesTheBucketAtItsEnd() {
        TokenBucketTest.pause(Algorithm.GCRA);
    }
}
