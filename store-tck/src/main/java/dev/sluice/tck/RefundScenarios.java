package dev.sluice.tck;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.UUID;

import static dev.sluice.tck.RateLimitStoreKit.assertWithinTheLimit;
import static org.assertj.core.api.Assertions.assertThat;

/** Refunds (charge after the response): one request's units back, never more than an untouched caller has. */
abstract class RefundScenarios extends Scenarios {

    RefundScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void aRefundGivesBackOneRequestAndNeverMoreThanAnUntouchedCallerHas(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = limiter(newStore(clock), FIVE.withAlgorithm(algorithm));
        String caller = "refund-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            limiter.decide(caller);
        }
        assertThat(limiter.refund(caller)).as("confirmed").isTrue();
        Decision afterOne = limiter.decide(caller);
        assertThat(afterOne.allowed()).isTrue();
        assertThat(afterOne.remaining()).as(algorithm + ": three spent, one refunded, one spent").isEqualTo(2);

        for (int i = 0; i < 10; i++) {
            assertThat(limiter.refund(caller)).isTrue();
        }
        Decision fresh = limiter.decide(caller);
        assertThat(fresh.remaining()).as(algorithm + ": refunds stop at an untouched caller's budget").isEqualTo(4);
        assertThat(fresh.reset()).isEqualTo(Duration.ofSeconds(algorithm.hasBurst() ? 20 : 100));
        assertWithinTheLimit(fresh, FIVE.withAlgorithm(algorithm), algorithm + " after refunds");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void aRefundTouchesNoOtherCallerAndNothingAbsent(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = limiter(newStore(clock), FIVE.withAlgorithm(algorithm));
        String spent = "spent-" + UUID.randomUUID();
        String other = "other-" + UUID.randomUUID();
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.decide(spent).allowed()).isTrue();
        }
        assertThat(limiter.refund(other)).isTrue();
        assertThat(limiter.decide(spent).allowed()).as("another caller's refund").isFalse();
        assertThat(limiter.decide(other).remaining()).as("a refund of an absent caller").isEqualTo(4);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void aRefundCoversEveryLimitOfTheDecisionAndItsCost(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        Limit shortLimit = Limit.of("short", 4, Duration.ofSeconds(100)).withAlgorithm(algorithm);
        Limit longLimit = Limit.of("long", 6, Duration.ofSeconds(1000)).withAlgorithm(algorithm);
        RateLimiter limiter = limiter(newStore(clock), shortLimit, longLimit);
        String caller = "refund-multi-" + UUID.randomUUID();
        assertThat(limiter.decide(caller, 2).allowed()).isTrue();
        assertThat(limiter.decide(caller, 2).allowed()).isTrue();
        assertThat(limiter.decide(caller).allowed()).as("the short limit is spent").isFalse();
        assertThat(limiter.refund(caller, 2)).isTrue();
        Decision next = limiter.decide(caller, 2);
        assertThat(next.allowed()).isTrue();
        assertThat(next.quotas()).extracting(Decision.Quota::remaining).containsExactly(0L, 2L);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("slidingLog")
    void aSlidingLogsRefundDropsTheNewestEntries(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimiter limiter = limiter(newStore(clock), FIVE.withAlgorithm(algorithm));
        String caller = "refund-log-" + UUID.randomUUID();
        limiter.decide(caller);
        clock.set(start + 50_000_000);
        limiter.decide(caller);
        clock.set(start + 60_000_000);
        assertThat(limiter.refund(caller)).isTrue();
        Decision d = limiter.decide(caller);
        assertThat(d.remaining()).isEqualTo(3);
        assertThat(d.binding().nextUnit()).as("the entry of 0 s is left, not the one of 50 s")
                .isEqualTo(Duration.ofSeconds(40));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void aRefundUnderOtherParametersGivesBackOnlyWhereTheStateMeansTheSame(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimitStore store = newStore(clock);
        String caller = "refund-changed-" + UUID.randomUUID();
        limiter(store, FIVE.withAlgorithm(algorithm)).decide(caller, 5);
        RateLimiter changed = limiter(store, TEN_PER_100S.withPolicy("conformance").withAlgorithm(algorithm));
        assertThat(changed.refund(caller)).isTrue();
        // a bucket written in other units is left alone; a count or log of the same period is refunded
        assertThat(changed.decide(caller).remaining()).as(algorithm.configName())
                .isEqualTo(algorithm.hasBurst() ? 4 : 5);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("slidingWindow")
    void aSlidingWindowsRefundReachesThePreviousWindowUntilTheCallerCommitsInTheNewOne(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimiter limiter = limiter(newStore(clock), FIVE.withAlgorithm(algorithm));
        String caller = "refund-window-" + UUID.randomUUID();
        limiter.decide(caller, 5);
        clock.set(start + 150_000_000);
        assertThat(limiter.refund(caller)).isTrue();
        // half-way into the next window the previous one's 4 (not 5) weigh 2: 5 - 2 - 1 left
        assertThat(limiter.decide(caller).remaining()).isEqualTo(2);
        clock.set(start + 350_000_000);
        assertThat(limiter.refund(caller)).as("a refund once both windows have passed").isTrue();
        assertThat(limiter.decide(caller).remaining()).isEqualTo(4);
    }
}
