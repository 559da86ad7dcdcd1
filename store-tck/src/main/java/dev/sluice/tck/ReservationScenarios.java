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

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static dev.sluice.Algorithm.FIXED_WINDOW;
import static dev.sluice.Algorithm.SLIDING_LOG;
import static dev.sluice.Algorithm.TOKEN_BUCKET;
import static org.assertj.core.api.Assertions.assertThat;

/** Reservations (outbound calls that wait): a schedule of slots, queued in order, all limits or none. */
abstract class ReservationScenarios extends Scenarios {

    ReservationScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    /** Reservations given back by a refund. */
    @Nested
    @Needs(Capability.REFUNDS)
    @DisplayName("with refunds (REFUNDS)")
    class WithRefunds {

        /**
         * Reservations ({@code acquire}): five fit now; each one after queues behind the ones before
         * it, at the instant its limit admits it; one that cannot be served within its longest wait is
         * refused with the wait it would need and spends nothing; a refunded reservation gives its
         * slot to the next one.
         */
        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.sluice.tck.Scenarios#everyAlgorithmThatWaits")
        void aReservationQueuesBehindTheOnesBeforeItAndARefundGivesItsSlotBack(Algorithm algorithm) {
            ManualClock clock = new ManualClock();
            RateLimitStore store = newStore(clock);
            Limit limit = FIVE.withAlgorithm(algorithm);
            String caller = "reserve-" + UUID.randomUUID();
            // the waits of the sixth, seventh and eighth reservation, all made at 0 s
            double[] waits = switch (algorithm) {
                // one token per 20 s: a debt paid off in turn
                case TOKEN_BUCKET, GCRA -> new double[] {20, 40, 60};
                // the next window, 100 s on, holds five more
                case FIXED_WINDOW -> new double[] {100, 100, 100};
                // the next window, once the five of this one weigh little enough: 5 * (100 - e) / 100
                // + counted + 1 <= 5 at e = 20, 40, 60
                case SLIDING_WINDOW -> new double[] {120, 140, 160};
                case SLIDING_LOG, CONCURRENCY -> throw new IllegalArgumentException("not a rate: " + algorithm);
            };
            String where = algorithm + " on " + storeName();
            for (int i = 0; i < 5; i++) {
                Decision now = reserve(store, caller, limit, 0);
                assertThat(now.outcome()).as(where + ": reservation " + i).isEqualTo(Decision.Outcome.ALLOWED);
                assertThat(now.retryAfter()).as(where + ": reservation " + i + " waits for nothing").isZero();
            }
            Decision notNow = reserve(store, caller, limit, 0);
            assertThat(notNow.outcome()).as(where + ": nothing left now").isEqualTo(Decision.Outcome.REJECTED);
            assertThat(notNow.retryAfter()).as(where).isEqualTo(seconds(waits[0]));

            Decision sixth = reserve(store, caller, limit, 1000);
            assertThat(sixth.outcome()).as(where).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(sixth.retryAfter()).as(where + ": the sixth waits").isEqualTo(seconds(waits[0]));
            store.refund(caller, List.of(limit)).toCompletableFuture().join();
            Decision again = reserve(store, caller, limit, 1000);
            assertThat(again.retryAfter()).as(where + ": the refunded slot is the next one's")
                    .isEqualTo(seconds(waits[0]));
            Decision seventh = reserve(store, caller, limit, 1000);
            assertThat(seventh.retryAfter()).as(where + ": the seventh queues behind the sixth")
                    .isEqualTo(seconds(waits[1]));

            Decision tooLong = reserve(store, caller, limit, waits[2] - 1);
            assertThat(tooLong.outcome()).as(where + ": beyond its longest wait").isEqualTo(Decision.Outcome.REJECTED);
            assertThat(tooLong.retryAfter()).as(where + ": the wait it would need").isEqualTo(seconds(waits[2]));
            Decision eighth = reserve(store, caller, limit, waits[2]);
            assertThat(eighth.outcome()).as(where + ": the refusal spent nothing").isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(eighth.retryAfter()).as(where).isEqualTo(seconds(waits[2]));
            if (algorithm != FIXED_WINDOW) {
                // nobody jumps the queue: a decision now finds the budget spent ahead (a fixed window
                // counts a decision into the window booked ahead, where the clock reads it)
                assertThat(store.decide(caller, List.of(limit)).toCompletableFuture().join().allowed())
                        .as(where + ": a decision while reservations wait").isFalse();
            }
        }

        /**
         * A sliding log reserves nothing ahead: entries stamped ahead would have to outlive the ones
         * they replace, for a refund; its reservation takes only what it has now, whatever the wait.
         */
    }

    @Test
    void aSlidingLogReservesOnlyWhatItHasNow() {
        ManualClock clock = new ManualClock();
        RateLimitStore store = newStore(clock);
        Limit limit = FIVE.withAlgorithm(SLIDING_LOG);
        String caller = "reserve-log-" + UUID.randomUUID();
        for (int i = 0; i < 5; i++) {
            assertThat(reserve(store, caller, limit, 1000).retryAfter()).isZero();
        }
        Decision sixth = reserve(store, caller, limit, 1000);
        assertThat(sixth.outcome()).as(storeName()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(sixth.retryAfter()).as(storeName() + ": when the oldest entry leaves").isEqualTo(seconds(100));
        clock.set(clock.nowMicros() + 100_000_000);
        assertThat(reserve(store, caller, limit, 1000).retryAfter()).as(storeName()).isZero();
    }

    /** A reservation under several limits waits for the slowest and spends all of them, or none. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithmThatWaits")
    void aReservationUnderSeveralLimitsWaitsForTheSlowestAndSpendsAllOrNothing(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimitStore store = newStore(clock);
        Limit five = FIVE.withAlgorithm(algorithm);
        Limit two = Limit.of("conformance-two", 2, Duration.ofSeconds(1000)).withAlgorithm(TOKEN_BUCKET);
        List<Limit> both = List.of(five, two);
        String caller = "reserve-all-" + UUID.randomUUID();
        String where = algorithm + " on " + storeName();
        assertThat(store.reserve(caller, both, Duration.ZERO).toCompletableFuture().join().retryAfter()).isZero();
        assertThat(store.reserve(caller, both, Duration.ZERO).toCompletableFuture().join().retryAfter()).isZero();
        // the two-per-1000 s bucket is empty: its next token in 500 s
        Decision refused = store.reserve(caller, both, seconds(499)).toCompletableFuture().join();
        assertThat(refused.outcome()).as(where).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(refused.retryAfter()).as(where).isEqualTo(seconds(500));
        assertThat(reserve(store, caller, five, 0).outcome())
                .as(where + ": the refusal spent nothing of the other limit")
                .isEqualTo(Decision.Outcome.ALLOWED);
        Decision waited = store.reserve(caller, both, seconds(500)).toCompletableFuture().join();
        assertThat(waited.outcome()).as(where).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(waited.retryAfter()).as(where).isEqualTo(seconds(500));
        assertThat(waited.quotas()).as(where + ": as of the reserved instant").allMatch(q -> q.allowed());
    }
}
