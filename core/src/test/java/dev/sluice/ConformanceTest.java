package dev.sluice;

import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Stores;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import static dev.sluice.Algorithm.FIXED_WINDOW;
import static dev.sluice.Algorithm.GCRA;
import static dev.sluice.Algorithm.SLIDING_LOG;
import static dev.sluice.Algorithm.SLIDING_WINDOW;
import static dev.sluice.Algorithm.TOKEN_BUCKET;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The conformance suite: every algorithm on both stores, through the same injected-time
 * scenarios, with the exact decision each must give. Both stores must meet the same table, so
 * they give identical decisions; {@link TwinTest} adds random traces.
 *
 * <p>Times are in seconds from a start aligned to every window, with long periods (100 s) so that
 * real-time TTLs in Redis never expire a key in the middle of a scenario.
 */
class ConformanceTest {

    static Stream<Arguments> everyAlgorithmOnEveryStore() {
        List<Arguments> cases = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            for (Stores store : Stores.values()) {
                cases.add(Arguments.of(algorithm, store));
            }
        }
        return cases.stream();
    }

    /** One request and the decision it must get; times in seconds. */
    record Step(double at, long cost, boolean allowed, long remaining, double reset, double retry) {
    }

    static Step ok(double at, long remaining, double reset) {
        return new Step(at, 0, true, remaining, reset, 0);
    }

    static Step no(double at, long remaining, double reset, double retry) {
        return new Step(at, 0, false, remaining, reset, retry);
    }

    private static void play(Algorithm algorithm, Stores store, Limit limit, List<Step> steps) {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimiter limiter = RateLimiter.builder().limit(limit.withAlgorithm(algorithm)).store(store.create(clock)).timeout(Stores.PATIENT).build();
        String caller = "conf-" + UUID.randomUUID();
        int i = 0;
        for (Step step : steps) {
            clock.set(start + Math.round(step.at * 1_000_000));
            Decision d = step.cost == 0 ? limiter.decide(caller) : limiter.decide(caller, step.cost);
            String where = algorithm + " on " + store + ", step " + i++ + " at " + step.at + "s";
            assertThat(d.allowed()).as(where + ": allowed").isEqualTo(step.allowed);
            assertThat(d.remaining()).as(where + ": remaining").isEqualTo(step.remaining);
            assertThat(d.reset()).as(where + ": reset").isEqualTo(seconds(step.reset));
            assertThat(d.retryAfter()).as(where + ": retry-after").isEqualTo(seconds(step.retry));
            if (!d.allowed() && limit.cost() == 1 && step.cost <= 1) {
                assertThat(d.binding().nextUnit()).as(where + ": the next unit of a refused request of cost 1")
                        .isEqualTo(d.retryAfter());
            }
        }
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("everyAlgorithmOnEveryStore")
    void nextUnitIsWhenOneMoreUnitIsGranted(Algorithm algorithm, Stores store) {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimiter limiter = RateLimiter.builder().limit(FIVE.withAlgorithm(algorithm)).store(store.create(clock))
                .timeout(Stores.PATIENT).build();
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
        };
        double[] at = {0, 0, 0, 30};
        for (int i = 0; i < at.length; i++) {
            clock.set(start + Math.round(at[i] * 1_000_000));
            Decision d = limiter.decide(caller);
            assertThat(d.allowed()).isTrue();
            assertThat(d.binding().nextUnit()).as(algorithm + " on " + store + ", request " + i)
                    .isEqualTo(seconds(expected[i]));
        }
    }

    private static Duration seconds(double s) {
        return Duration.ofNanos(Math.round(s * 1_000_000) * 1_000);
    }

    private static final Limit FIVE = Limit.of("conformance", 5, Duration.ofSeconds(100));

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("everyAlgorithmOnEveryStore")
    void burstThenSteadyRate(Algorithm algorithm, Stores store) {
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
        };
        play(algorithm, store, FIVE, steps);
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("everyAlgorithmOnEveryStore")
    void boundaryBurstIsTwiceTheLimitOnlyForTheFixedWindow(Algorithm algorithm, Stores store) {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = RateLimiter.builder().limit(FIVE.withAlgorithm(algorithm)).store(store.create(clock)).timeout(Stores.PATIENT).build();
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

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("everyAlgorithmOnEveryStore")
    void costAboveOne(Algorithm algorithm, Stores store) {
        Limit ten = Limit.of("cost", 10, Duration.ofSeconds(100)).withCost(4);
        List<Step> steps = switch (algorithm) {
            case TOKEN_BUCKET, GCRA -> List.of(ok(0, 6, 40), ok(0, 2, 80), no(0, 2, 80, 20), ok(20, 0, 100));
            case FIXED_WINDOW -> List.of(ok(0, 6, 100), ok(0, 2, 100), no(0, 2, 100, 100), no(20, 2, 80, 80));
            // next window: 8 weighted down to 6 leaves room for 4, 25 s into it
            case SLIDING_WINDOW -> List.of(ok(0, 6, 100), ok(0, 2, 100), no(0, 2, 100, 125), no(20, 2, 80, 105));
            case SLIDING_LOG -> List.of(ok(0, 6, 100), ok(0, 2, 100), no(0, 2, 100, 100), no(20, 2, 80, 80));
        };
        play(algorithm, store, ten, steps);
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("everyAlgorithmOnEveryStore")
    void costAboveWhatThePolicyCanEverGrantIsRefusedAndConsumesNothing(Algorithm algorithm, Stores store) {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = RateLimiter.builder().limit(FIVE.withAlgorithm(algorithm)).store(store.create(clock)).timeout(Stores.PATIENT).build();
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

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("everyAlgorithmOnEveryStore")
    void aYearIdleRestoresTheWholeBudget(Algorithm algorithm, Stores store) {
        double year = 366 * 86_400;
        double reset = algorithm.hasBurst() ? 20 : 100;
        play(algorithm, store, FIVE, List.of(
                ok(0, 4, reset), ok(0, 3, algorithm.hasBurst() ? 40 : 100),
                ok(year, 4, reset), ok(year, 3, algorithm.hasBurst() ? 40 : 100)));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("everyAlgorithmOnEveryStore")
    void severalLimitsAreAllOrNothing(Algorithm algorithm, Stores store) {
        ManualClock clock = new ManualClock();
        Limit shortLimit = Limit.of("short", 2, Duration.ofSeconds(100)).withAlgorithm(algorithm);
        Limit longLimit = Limit.of("long", 3, Duration.ofSeconds(1000)).withAlgorithm(algorithm);
        RateLimiter limiter = RateLimiter.builder().limit(shortLimit).limit(longLimit).store(store.create(clock)).timeout(Stores.PATIENT).build();
        String caller = "multi-" + UUID.randomUUID();

        assertThat(limiter.decide(caller).allowed()).isTrue();
        assertThat(limiter.decide(caller).allowed()).isTrue();
        Decision third = limiter.decide(caller);
        assertThat(third.outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(third.quotas()).extracting(Decision.Quota::allowed).containsExactly(false, true);
        assertThat(third.quotas()).extracting(Decision.Quota::remaining).containsExactly(0L, 1L);
        assertThat(third.binding().limit()).isEqualTo(shortLimit);

        clock.advance(Duration.ofSeconds(200)); // the short limit is whole again; the long one is not
        Decision fourth = limiter.decide(caller);
        assertThat(fourth.allowed()).isTrue();
        assertThat(fourth.quotas()).extracting(Decision.Quota::remaining).containsExactly(1L, 0L);
        assertThat(fourth.binding().limit()).isEqualTo(longLimit);

        for (int i = 0; i < 3; i++) {
            // the long limit refuses; the short one admits each time, and must not be charged
            Decision refused = limiter.decide(caller);
            assertThat(refused.allowed()).isFalse();
            assertThat(refused.quotas()).extracting(Decision.Quota::allowed).containsExactly(true, false);
            assertThat(refused.quotas()).extracting(Decision.Quota::remaining).containsExactly(1L, 0L);
            assertThat(refused.retryAfter()).isEqualTo(refused.quotas().get(1).retryAfter()).isPositive();
        }
    }
}
