package dev.sluice.tck;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static dev.sluice.tck.RateLimitStoreKit.assertWithinTheLimit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A policy whose limit changes (a redeploy, an override) while callers have state: what was used
 * carries over where it means the same under the new limit, clamped to it, and never locks a
 * caller out for longer than the new limit would.
 */
abstract class ChangedLimitScenarios extends Scenarios {

    ChangedLimitScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    /** From a step's time on, the policy is counted under {@code limit}: a redeploy with other parameters. */
    record Phase(Limit limit, List<Step> steps) {
    }

    static Step spend(double at, long cost, long remaining, double reset) {
        return new Step(at, cost, true, remaining, reset, 0);
    }

    /**
     * Plays phases on one store, each through a new limiter of the same policy, as a redeploy
     * would. Beyond the exact decisions, every answer must be one the phase's limit could give:
     * remaining within [0, capacity], reset and retry never longer than its full restore.
     */
    private void playChanges(Algorithm algorithm, List<Phase> phases) {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimitStore shared = newStore(clock);
        String caller = "change-" + UUID.randomUUID();
        int i = 0;
        for (Phase phase : phases) {
            Limit limit = phase.limit.withAlgorithm(algorithm);
            RateLimiter limiter = RateLimiter.builder().limit(limit).store(shared).timeout(PATIENT).build();
            for (Step step : phase.steps) {
                clock.set(start + Math.round(step.at() * 1_000_000));
                String where = algorithm + " on " + storeName() + ", step " + i++ + " at " + step.at() + "s under "
                        + limit;
                Decision d = step.cost() == 0 ? limiter.decide(caller) : limiter.decide(caller, step.cost());
                assertThat(d.storeFailed()).as(where + ": store failed").isFalse();
                assertStep(d, step, limit, where);
                assertWithinTheLimit(d, limit, where);
            }
        }
    }

    private static final Limit DAILY = Limit.of("changed", 1000, Duration.ofDays(1));

    @ParameterizedTest(name = "{0}")
    @MethodSource("buckets")
    void aSmallerBurstKeepsWhatWasUsedClampedToTheNewBurst(Algorithm algorithm) {
        // one token per 10 s; 15 of 20 used at 0 s, clamped to 10, refilled from then on
        playChanges(algorithm, List.of(
                new Phase(TEN_PER_100S.withBurst(20), List.of(spend(0, 15, 5, 150))),
                new Phase(TEN_PER_100S.withBurst(10), List.of(no(5, 0, 95, 5), no(8, 0, 92, 2), ok(10, 0, 100)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("buckets")
    void aLargerBurstKeepsWhatWasUsed(Algorithm algorithm) {
        // 15 of 20 used at 0 s, one token refilled since: 14 used of 40
        playChanges(algorithm, List.of(
                new Phase(TEN_PER_100S.withBurst(20), List.of(spend(0, 15, 5, 150))),
                new Phase(TEN_PER_100S.withBurst(40), List.of(ok(10, 25, 150)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("buckets")
    void aRaisedRateAppliesAtOnce(Algorithm algorithm) {
        // one request of 1/30d used one token; under 100/s it is one of 100, half refilled 5 ms later
        playChanges(algorithm, List.of(
                new Phase(Limit.of("changed", 1, Duration.ofDays(30)), List.of(ok(0, 0, 30 * 86_400))),
                new Phase(Limit.of("changed", "100/s").withBurst(100), List.of(ok(0.005, 98, 0.015)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("buckets")
    void aLoweredRateKeepsWhatWasUsedUntilTheOldBucketWouldBeFull(Algorithm algorithm) {
        // 100 of 100 used at 0 s, clamped to a burst of 1 that refills in 1000 s; but at 100 s
        // the old bucket is full and its key gone
        playChanges(algorithm, List.of(
                new Phase(Limit.of("changed", 100, Duration.ofSeconds(100)), List.of(spend(0, 100, 0, 100))),
                new Phase(Limit.of("changed", 1, Duration.ofSeconds(1000)), List.of(no(50, 0, 50, 50),
                        no(99, 0, 1, 1), ok(100, 0, 1000)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("buckets")
    void aClampedBurstRefillsAtTheNewRate(Algorithm algorithm) {
        // 2 of 2 used at 0 s, refilled in 30 days; under 1/s with a burst of 1 the use is clamped
        // to 1 token, refilled in a second: no lockout for the rest of the 30 days
        playChanges(algorithm, List.of(
                new Phase(Limit.of("changed", 2, Duration.ofDays(30)), List.of(spend(0, 2, 0, 30 * 86_400))),
                new Phase(Limit.of("changed", "1/s"), List.of(no(0.5, 0, 0.5, 0.5), ok(1, 0, 1), no(1.5, 0, 0.5, 0.5),
                        ok(2, 0, 1)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixedWindow")
    void aFixedWindowsCountCarriesOverClampedToTheNewCount(Algorithm algorithm) {
        playChanges(algorithm, List.of(
                new Phase(DAILY, List.of(spend(0, 800, 200, 86_400))),
                // 800 used of 500: nothing left until the day ends
                new Phase(Limit.of("changed", 500, Duration.ofDays(1)), List.of(no(3_600, 0, 82_800, 82_800))),
                // 800 used of 2000: 1200 left, one spent now
                new Phase(Limit.of("changed", 2000, Duration.ofDays(1)), List.of(ok(7_200, 1199, 79_200)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixedWindow")
    void aFixedWindowsCountCarriesOverIntoTheNewWindowHoldingTheOldOnesStart(Algorithm algorithm) {
        playChanges(algorithm, List.of(
                new Phase(Limit.of("changed", 10, Duration.ofSeconds(100)), List.of(spend(0, 5, 5, 100))),
                // a longer window that holds the old one's start: the 5 carry over
                new Phase(Limit.of("changed", 10, Duration.ofSeconds(1000)), List.of(ok(50, 4, 950))),
                // a shorter window, after the old one's start: a fresh window
                new Phase(Limit.of("changed", 10, Duration.ofSeconds(10)), List.of(ok(60, 9, 10)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixedWindow")
    void aWindowIndexFromAShortPeriodIsNoLockoutUnderALongOne(Algorithm algorithm) {
        playChanges(algorithm, List.of(
                new Phase(Limit.of("changed", 10, Duration.ofSeconds(10)), List.of(spend(0, 10, 0, 10))),
                // still inside the old 10 s: its 10 count in today's window
                // (until the old window ends, when its key would be gone)
                new Phase(Limit.of("changed", 10, Duration.ofDays(1)), List.of(no(5, 0, 5, 5), no(9, 0, 1, 1),
                        // the old window is over: so is what it counted
                        ok(10, 9, 86_390)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("slidingWindow")
    void aSlidingWindowsCountsCarryOverOnTheSameGrid(Algorithm algorithm) {
        playChanges(algorithm, List.of(
                new Phase(TEN_PER_100S, List.of(spend(0, 8, 2, 100))),
                // 8 of 5: the next window must weigh the 8 down to 4, 50 s into it
                new Phase(Limit.of("changed", 5, Duration.ofSeconds(100)), List.of(no(10, 0, 90, 140))),
                new Phase(Limit.of("changed", 20, Duration.ofSeconds(100)), List.of(ok(20, 11, 80)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("slidingWindow")
    void aSlidingWindowsCountsCarryIntoTheNewWindowHoldingTheOldOnesStart(Algorithm algorithm) {
        playChanges(algorithm, List.of(
                new Phase(TEN_PER_100S, List.of(spend(0, 8, 2, 100))),
                // the old window started in the current 1000 s window: its 8 count there
                new Phase(Limit.of("changed", 10, Duration.ofSeconds(1000)), List.of(ok(150, 1, 850))),
                // the 1000 s window started before the previous 10 s window: nothing carries
                new Phase(Limit.of("changed", 10, Duration.ofSeconds(10)), List.of(ok(160, 9, 10)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("slidingWindow")
    void aSlidingWindowsCountsCarryIntoTheNewPreviousWindow(Algorithm algorithm) {
        playChanges(algorithm, List.of(
                new Phase(TEN_PER_100S, List.of(spend(100, 8, 2, 100))),
                // the old window started at 100 s, in the previous 150 s window: 10 s into the
                // current one its 8 weigh 8 * 140/150, rounded up to 8
                new Phase(Limit.of("changed", 10, Duration.ofSeconds(150)), List.of(ok(160, 1, 140)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("slidingWindow")
    void aSlidingWindowIndexFromAShortPeriodIsNoLockoutUnderALongOne(Algorithm algorithm) {
        playChanges(algorithm, List.of(
                new Phase(Limit.of("changed", 10, Duration.ofSeconds(10)), List.of(spend(0, 10, 0, 10))),
                // the 10 count in today's window, until the old state has passed (its key gone)
                new Phase(Limit.of("changed", 10, Duration.ofDays(1)), List.of(no(5, 0, 15, 15),
                        ok(20, 9, 86_380)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("slidingLog")
    void aSlidingLogIsReadUnderTheNewCount(Algorithm algorithm) {
        Limit perMinute = Limit.of("changed", 10, Duration.ofMinutes(1));
        playChanges(algorithm, List.of(
                new Phase(perMinute, List.of(spend(0, 10, 0, 60))),
                // 10 of 5 in the last minute: room again when the 6th oldest leaves, at 60 s
                new Phase(Limit.of("changed", 5, Duration.ofMinutes(1)), List.of(no(10, 0, 50, 50))),
                new Phase(Limit.of("changed", 20, Duration.ofMinutes(1)), List.of(ok(20, 9, 60)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("slidingLog")
    void aSlidingLogHoldingMoreThanTheNewCountGetsItsNextUnitWhenItFallsBelowTheCount(Algorithm algorithm) {
        Limit perMinute = Limit.of("changed", 10, Duration.ofMinutes(1));
        playChanges(algorithm, List.of(
                new Phase(perMinute, List.of(spend(0, 5, 5, 60), spend(20, 5, 0, 60))),
                // 10 of 5 in the last minute: the 5 of 0 s leaving at 60 s still leave 5, a full
                // log; the next unit (and the retry) comes when the 6th oldest leaves, at 80 s
                new Phase(Limit.of("changed", 5, Duration.ofMinutes(1)), List.of(no(30, 0, 50, 50), no(60, 0, 20, 20),
                        ok(80, 4, 60)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("slidingLog")
    void aSlidingLogIsReadUnderTheNewWindowUntilTheOldOneHasPassed(Algorithm algorithm) {
        Limit perMinute = Limit.of("changed", 10, Duration.ofMinutes(1));
        playChanges(algorithm, List.of(
                new Phase(perMinute, List.of(spend(0, 10, 0, 60))),
                // the 10 still count in two minutes, until the old minute has passed (its key gone)
                new Phase(Limit.of("changed", 10, Duration.ofMinutes(2)), List.of(no(30, 0, 30, 30),
                        ok(60, 9, 120)))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void anUnchangedLimitUnderANewLimiterKeepsItsState(Algorithm algorithm) {
        playChanges(algorithm, List.of(
                new Phase(TEN_PER_100S, List.of(spend(0, 5, 5, algorithm.hasBurst() ? 50 : 100))),
                new Phase(TEN_PER_100S, List.of(ok(0, 4, algorithm.hasBurst() ? 60 : 100)))));
    }
}
