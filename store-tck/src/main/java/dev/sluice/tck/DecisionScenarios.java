package dev.sluice.tck;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static dev.sluice.Algorithm.FIXED_WINDOW;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decisions, per rate algorithm, against a table of exact answers: allowed, remaining, reset,
 * retry-after and the next unit, from a burst to a year of idleness and a clock going backwards.
 */
abstract class DecisionScenarios extends Scenarios {

    DecisionScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    private void play(Algorithm algorithm, Limit limit, List<Step> steps) {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimiter limiter = RateLimiter.builder().limit(limit.withAlgorithm(algorithm)).store(newStore(clock))
                .timeout(PATIENT).build();
        String caller = "conf-" + UUID.randomUUID();
        int i = 0;
        for (Step step : steps) {
            clock.set(start + Math.round(step.at() * 1_000_000));
            Decision d = step.cost() == 0 ? limiter.decide(caller) : limiter.decide(caller, step.cost());
            String where = algorithm + " on " + storeName() + ", step " + i++ + " at " + step.at() + "s";
            assertStep(d, step, limit, where);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void nextUnitIsWhenOneMoreUnitIsGranted(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimiter limiter = RateLimiter.builder().limit(FIVE.withAlgorithm(algorithm)).store(newStore(clock))
                .timeout(PATIENT).build();
        String caller = "next-" + UUID.randomUUID();
        // three requests at 0 s, one at 30 s; the time until one more unit after each
        double[] expected = switch (algorithm) {
            // one token per 20 s; at 30 s the bucket holds 3.5 tokens, 2.5 after the request
            case TOKEN_BUCKET, GCRA -> new double[] {20, 20, 20, 10};
            case FIXED_WINDOW -> new double[] {100, 100, 100, 70};
            // the next window weighs 1, 2, 3 down to 0, 1, 2 at its end, half-way, a third of the way
            // in; at 30 s, 4 in this window are weighed down to 3 a quarter into the next
            case SLIDING_WINDOW -> new double[] {200, 150, 133.333334, 95};
            // the oldest entry (0 s) leaves at 100 s
            case SLIDING_LOG -> new double[] {100, 100, 100, 70};
            case CONCURRENCY -> throw new IllegalArgumentException("not a rate: " + algorithm);
        };
        double[] at = {0, 0, 0, 30};
        for (int i = 0; i < at.length; i++) {
            clock.set(start + Math.round(at[i] * 1_000_000));
            Decision d = limiter.decide(caller);
            assertThat(d.allowed()).isTrue();
            assertThat(d.binding().nextUnit()).as(algorithm + " on " + storeName() + ", request " + i)
                    .isEqualTo(seconds(expected[i]));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void burstThenSteadyRate(Algorithm algorithm) {
        List<Step> steps = switch (algorithm) {
            case TOKEN_BUCKET, GCRA -> List.of(
                    ok(0, 4, 20), ok(0, 3, 40), ok(0, 2, 60), ok(0, 1, 80), ok(0, 0, 100),
                    no(0, 0, 100, 20),
                    ok(20, 0, 100),
                    no(30, 0, 90, 10),
                    ok(40, 0, 100),
                    ok(140, 4, 20));
            case FIXED_WINDOW -> List.of(
                    ok(0, 4, 100), ok(0, 3, 100), ok(0, 2, 100), ok(0, 1, 100), ok(0, 0, 100),
                    no(0, 0, 100, 100),
                    no(20, 0, 80, 80),
                    no(30, 0, 70, 70),
                    no(40, 0, 60, 60),
                    ok(140, 4, 60));
            case SLIDING_WINDOW -> List.of(
                    ok(0, 4, 100), ok(0, 3, 100), ok(0, 2, 100), ok(0, 1, 100), ok(0, 0, 100),
                    // the next window must weigh the 5 down to 4: 20 s into it
                    no(0, 0, 100, 120),
                    no(20, 0, 80, 100),
                    no(30, 0, 70, 90),
                    no(40, 0, 60, 80),
                    // 40 s into the next window: 5 * 60% = 3 still count
                    ok(140, 1, 60));
            case SLIDING_LOG -> List.of(
                    ok(0, 4, 100), ok(0, 3, 100), ok(0, 2, 100), ok(0, 1, 100), ok(0, 0, 100),
                    no(0, 0, 100, 100),
                    no(20, 0, 80, 80),
                    no(30, 0, 70, 70),
                    no(40, 0, 60, 60),
                    ok(140, 4, 100));
            case CONCURRENCY -> throw new IllegalArgumentException("not a rate: " + algorithm);
        };
        play(algorithm, FIVE, steps);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void boundaryBurstIsTwiceTheLimitOnlyForTheFixedWindow(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = RateLimiter.builder().limit(FIVE.withAlgorithm(algorithm)).store(newStore(clock))
                .timeout(PATIENT).build();
        String caller = "edge-" + UUID.randomUUID();
        clock.advance(Duration.ofSeconds(90)); // the last tenth of the first window
        int first = admitted(limiter, caller, 5);
        clock.advance(Duration.ofSeconds(10)); // the first instant of the next window
        int second = admitted(limiter, caller, 5);

        assertThat(first).as("first burst").isEqualTo(5);
        assertThat(second).as("admitted again 10 s later, across the window edge")
                .isEqualTo(algorithm == FIXED_WINDOW ? 5 : 0);
    }

    private static int admitted(RateLimiter limiter, String caller, int attempts) {
        int admitted = 0;
        for (int i = 0; i < attempts; i++) {
            admitted += limiter.decide(caller).allowed() ? 1 : 0;
        }
        return admitted;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void costAboveOne(Algorithm algorithm) {
        Limit ten = Limit.of("cost", 10, Duration.ofSeconds(100)).withCost(4);
        List<Step> steps = switch (algorithm) {
            case TOKEN_BUCKET, GCRA -> List.of(ok(0, 6, 40), ok(0, 2, 80), no(0, 2, 80, 20), ok(20, 0, 100));
            case FIXED_WINDOW -> List.of(ok(0, 6, 100), ok(0, 2, 100), no(0, 2, 100, 100), no(20, 2, 80, 80));
            // next window: 8 weighted down to 6 leaves room for 4, 25 s into it
            case SLIDING_WINDOW -> List.of(ok(0, 6, 100), ok(0, 2, 100), no(0, 2, 100, 125), no(20, 2, 80, 105));
            case SLIDING_LOG -> List.of(ok(0, 6, 100), ok(0, 2, 100), no(0, 2, 100, 100), no(20, 2, 80, 80));
            case CONCURRENCY -> throw new IllegalArgumentException("not a rate: " + algorithm);
        };
        play(algorithm, ten, steps);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void costAboveWhatThePolicyCanEverGrantIsRefusedAndConsumesNothing(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = RateLimiter.builder().limit(FIVE.withAlgorithm(algorithm)).store(newStore(clock))
                .timeout(PATIENT).build();
        String caller = "never-" + UUID.randomUUID();
        assertThat(limiter.decide(caller).remaining()).isEqualTo(4);

        Decision never = limiter.decide(caller, 6);
        assertThat(never.outcome()).isEqualTo(Decision.Outcome.UNSATISFIABLE);
        assertThat(never.allowed()).isFalse();
        assertThat(never.retryAfter()).isEqualTo(Decision.NEVER);

        Decision next = limiter.decide(caller);
        assertThat(next.allowed()).isTrue();
        assertThat(next.remaining()).as("the refused request consumed nothing").isEqualTo(3);
        assertThat(next.reset()).isEqualTo(Duration.ofSeconds(algorithm.hasBurst() ? 40 : 100));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void aYearIdleRestoresTheWholeBudget(Algorithm algorithm) {
        double year = 366 * 86_400;
        double reset = algorithm.hasBurst() ? 20 : 100;
        play(algorithm, FIVE, List.of(
                ok(0, 4, reset), ok(0, 3, algorithm.hasBurst() ? 40 : 100),
                ok(year, 4, reset), ok(year, 3, algorithm.hasBurst() ? 40 : 100)));
    }

    /**
     * A store's clock that goes back (a failover to a Redis whose clock is slower) finds state
     * written in its future: it grants nothing extra and answers a refusal, never a failure. (Its
     * times may then exceed the full restore by the step back: the state restores on the store's
     * clock.)
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void aClockGoingBackwardsGrantsNothingExtraAndAnswersWithinTheLimit(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        Limit limit = FIVE.withAlgorithm(algorithm);
        RateLimiter limiter = limiter(newStore(clock), limit);
        String caller = "backwards-" + UUID.randomUUID();
        clock.advance(Duration.ofSeconds(30));
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.decide(caller).allowed()).isTrue();
        }
        for (long back : new long[] {1, 30, 3_600, 86_400}) {
            clock.advance(Duration.ofSeconds(-back));
            String where = algorithm + " on " + storeName() + ", the clock " + back + " s back";
            Decision d = limiter.decide(caller);
            assertThat(d.storeFailed()).as(where + ": store failed").isFalse();
            assertThat(d.allowed()).as(where + ": allowed").isFalse();
            assertThat(d.remaining()).as(where + ": remaining").isZero();
            Decision.Quota q = d.binding();
            assertThat(List.of(q.reset(), q.retryAfter(), q.nextUnit(), d.retryAfter())).as(where + ": times")
                    .allSatisfy(time -> assertThat(time).isPositive());
            clock.advance(Duration.ofSeconds(back));
        }
    }
}
