package dev.sluice.tck;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.UUID;

import static dev.sluice.Algorithm.FIXED_WINDOW;
import static dev.sluice.Algorithm.SLIDING_LOG;
import static org.assertj.core.api.Assertions.assertThat;

/** A provider's pause: nothing until it ends, then the budget comes back at the limit's pace. */
abstract class PauseScenarios extends Scenarios {

    PauseScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    /** Reservations held by a pause. */
    @Nested
    @Needs(Capability.RESERVATIONS)
    @DisplayName("with reservations (RESERVATIONS)")
    class WithReservations {

        /**
         * A provider's pause ({@link RateLimitStore#pause}): nothing until it ends, then the budget
         * comes back at the limit's pace (no burst); a shorter pause after it changes nothing.
         */
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.sluice.tck.Scenarios#everyAlgorithmThatWaits")
        void aPauseHoldsReservationsUntilItEndsThenTheBudgetComesBackAtItsPace(Algorithm algorithm) {
            ManualClock clock = new ManualClock();
            RateLimitStore store = newStore(clock);
            Limit limit = FIVE.withAlgorithm(algorithm);
            String caller = "pause-" + UUID.randomUUID();
            String where = algorithm + " on " + storeName();
            assertThat(reserve(store, caller, limit, 0).retryAfter()).as(where + ": before the pause").isZero();
            store.pause(caller, List.of(limit), seconds(150)).toCompletableFuture().join();
            // the waits of the next three reservations, made at 0 s, after a pause of 150 s
            double[] waits = switch (algorithm) {
                // empty at 150 s: one token per 20 s from there
                case TOKEN_BUCKET, GCRA -> new double[] {170, 190, 210};
                // the windows starting before 150 s count full: five in the window of 200 s
                case FIXED_WINDOW -> new double[] {200, 200, 200};
                // the window of 100 s counts full: its weight decays over the next as after five
                case SLIDING_WINDOW -> new double[] {220, 240, 260};
                case SLIDING_LOG, CONCURRENCY -> throw new IllegalArgumentException("cannot wait: " + algorithm);
            };
            assertThat(reserve(store, caller, limit, 0).outcome()).as(where + ": nothing during the pause")
                    .isEqualTo(Decision.Outcome.REJECTED);
            assertThat(reserve(store, caller, limit, 1000).retryAfter()).as(where + ": the first after the pause")
                    .isEqualTo(seconds(waits[0]));
            assertThat(reserve(store, caller, limit, 1000).retryAfter()).as(where + ": the second, at the limit's pace")
                    .isEqualTo(seconds(waits[1]));
            store.pause(caller, List.of(limit), seconds(10)).toCompletableFuture().join();
            assertThat(reserve(store, caller, limit, 1000).retryAfter()).as(where + ": a shorter pause grants nothing")
                    .isEqualTo(seconds(waits[2]));
            if (algorithm != FIXED_WINDOW) {
                // (a fixed window counts a decision into the window booked ahead, as after any reservation)
                assertThat(store.decide(caller, List.of(limit)).toCompletableFuture().join().allowed())
                        .as(where + ": a decision during the pause").isFalse();
            }
        }
    }

    /** A paused sliding log lets units go one by one from the pause's end, as a bucket refilling from empty. */
    @Test
    void aPausedSlidingLogLetsUnitsGoOneByOneFromThePausesEnd() {
        ManualClock clock = new ManualClock();
        RateLimitStore store = newStore(clock);
        Limit limit = FIVE.withAlgorithm(SLIDING_LOG);
        String caller = "pause-log-" + UUID.randomUUID();
        long start = clock.nowMicros();
        store.pause(caller, List.of(limit), seconds(150)).toCompletableFuture().join();
        Decision during = store.decide(caller, List.of(limit)).toCompletableFuture().join();
        assertThat(during.allowed()).as(storeName() + ": during the pause").isFalse();
        assertThat(during.retryAfter()).as(storeName() + ": the first unit one token's time after the end")
                .isEqualTo(seconds(170));
        clock.set(start + 170_000_000);
        assertThat(store.decide(caller, List.of(limit)).toCompletableFuture().join().allowed()).as(storeName())
                .isTrue();
        assertThat(store.decide(caller, List.of(limit)).toCompletableFuture().join().allowed())
                .as(storeName() + ": no burst").isFalse();
        clock.set(start + 190_000_000);
        assertThat(store.decide(caller, List.of(limit)).toCompletableFuture().join().allowed()).as(storeName())
                .isTrue();
    }
}
