package dev.sluice.testing;

import dev.sluice.Algorithm;
import dev.sluice.ConcurrencyLimiter;
import dev.sluice.Lease;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;

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
 * The store contract: every algorithm through the same injected-time scenarios, with the exact
 * decision each must give. Every store meets the same table, so stores give identical decisions;
 * the in-memory store runs it in {@code sluice-core}, the Redis store in {@code sluice-redis}, and
 * a third-party store can run it from core's test jar by naming how to build itself:
 *
 * <pre>{@code
 * class MyStoreContractTest extends RateLimitStoreContract {
 *     protected RateLimitStore newStore(TimeSource time) { return MyStore.reading(time); }
 * }
 * }</pre>
 *
 * <p>Times are in seconds from a start aligned to every window, with long periods (100 s) so that
 * real-time TTLs in Redis never expire a key in the middle of a scenario.
 */
public abstract class RateLimitStoreContract {

    /**
     * The timeout of suites that test decisions rather than deadlines: long enough that a busy
     * two-core CI machine never turns a slow answer into a failure decision.
     */
    public static final Duration PATIENT = Duration.ofSeconds(20);

    /** A new store that reads {@code time} instead of its own clock. */
    protected abstract RateLimitStore newStore(TimeSource time);

    private String storeName() {
        return getClass().getSimpleName();
    }


    static Stream<Arguments> everyAlgorithm() {
        List<Arguments> cases = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.rates()) {
            cases.add(Arguments.of(algorithm));
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

    private void play(Algorithm algorithm, Limit limit, List<Step> steps) {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimiter limiter = RateLimiter.builder().limit(limit.withAlgorithm(algorithm)).store(newStore(clock)).timeout(PATIENT).build();
        String caller = "conf-" + UUID.randomUUID();
        int i = 0;
        for (Step step : steps) {
            clock.set(start + Math.round(step.at * 1_000_000));
            Decision d = step.cost == 0 ? limiter.decide(caller) : limiter.decide(caller, step.cost);
            String where = algorithm + " on " + storeName() + ", step " + i++ + " at " + step.at + "s";
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
                clock.set(start + Math.round(step.at * 1_000_000));
                String where = algorithm + " on " + storeName() + ", step " + i++ + " at " + step.at + "s under " + limit;
                Decision d = step.cost == 0 ? limiter.decide(caller) : limiter.decide(caller, step.cost);
                assertThat(d.storeFailed()).as(where + ": store failed").isFalse();
                assertThat(d.allowed()).as(where + ": allowed").isEqualTo(step.allowed);
                assertThat(d.remaining()).as(where + ": remaining").isEqualTo(step.remaining);
                assertThat(d.reset()).as(where + ": reset").isEqualTo(seconds(step.reset));
                assertThat(d.retryAfter()).as(where + ": retry-after").isEqualTo(seconds(step.retry));
                if (!d.allowed() && limit.cost() == 1 && step.cost <= 1) {
                    assertThat(d.binding().nextUnit()).as(where + ": the next unit of a refused request of cost 1")
                            .isEqualTo(d.retryAfter());
                }
                assertWithinTheLimit(d, limit, where);
            }
        }
    }

    /**
     * A decision that the limit could give on its own: nothing granted or withheld beyond it. The
     * next unit is to come exactly when the budget is not whole, and never later than the whole
     * budget's restore.
     */
    public static void assertWithinTheLimit(Decision d, Limit limit, String where) {
        for (Decision.Quota q : d.quotas()) {
            assertThat(q.remaining()).as(where + ": remaining").isBetween(0L, q.limit().capacity());
            assertThat(q.reset()).as(where + ": reset").isBetween(Duration.ZERO, fullRestore(q.limit()));
            assertThat(q.retryAfter()).as(where + ": retry-after").isBetween(Duration.ZERO, fullRestore(q.limit()));
            assertThat(q.nextUnit()).as(where + ": next unit").isBetween(Duration.ZERO, fullRestore(q.limit()));
            assertThat(q.nextUnit().isZero()).as(where + ": no next unit exactly when the budget is whole (remaining "
                    + q.remaining() + ", next unit " + q.nextUnit() + ")").isEqualTo(q.remaining() == q.limit().capacity());
        }
        assertThat(d.retryAfter()).as(where + ": retry-after").isBetween(Duration.ZERO, fullRestore(limit));
    }

    /** The longest time a limit can need to restore its whole budget, from any state. */
    public static Duration fullRestore(Limit limit) {
        return switch (limit.algorithm()) {
            // burst tokens at count per period, rounded up to whole microseconds
            case TOKEN_BUCKET, GCRA -> Duration.ofNanos(
                    -Math.floorDiv(-limit.burst() * limit.periodMicros(), limit.count()) * 1_000);
            case SLIDING_WINDOW -> limit.period().multipliedBy(2);
            case FIXED_WINDOW, SLIDING_LOG -> limit.period();
            // a lease held lives at most the lease
            case CONCURRENCY -> limit.period();
        };
    }

    private static Duration seconds(double s) {
        return Duration.ofNanos(Math.round(s * 1_000_000) * 1_000);
    }

    private static final Limit FIVE = Limit.of("conformance", 5, Duration.ofSeconds(100));

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
        RateLimiter limiter = RateLimiter.builder().limit(FIVE.withAlgorithm(algorithm)).store(newStore(clock)).timeout(PATIENT).build();
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
        RateLimiter limiter = RateLimiter.builder().limit(FIVE.withAlgorithm(algorithm)).store(newStore(clock)).timeout(PATIENT).build();
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

    @org.junit.jupiter.api.Test
    void aClockGoingBackwardsHoldsLeasesNoLongerThanTheLease() {
        ManualClock clock = new ManualClock();
        ConcurrencyLimiter limiter = concurrency(newStore(clock));
        String caller = "lease-backwards-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.acquire(caller).held()).isTrue();
        }
        clock.advance(Duration.ofSeconds(-3_600));
        Lease refused = limiter.acquire(caller);
        assertLease(refused, false, 0, 100, 1, "an hour back: the leases expire one lease from now at the latest");
        assertWithinTheLimit(refused.decision(), THREE_IN_FLIGHT, "an hour back");
        clock.advance(Duration.ofSeconds(100));
        assertLease(limiter.acquire(caller), true, 2, 100, 0, "one lease later on the slower clock");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void severalLimitsAreAllOrNothing(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        Limit shortLimit = Limit.of("short", 2, Duration.ofSeconds(100)).withAlgorithm(algorithm);
        Limit longLimit = Limit.of("long", 3, Duration.ofSeconds(1000)).withAlgorithm(algorithm);
        RateLimiter limiter = RateLimiter.builder().limit(shortLimit).limit(longLimit).store(newStore(clock)).timeout(PATIENT).build();
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

    static Stream<Arguments> buckets() {
        return everyAlgorithm().filter(a -> ((Algorithm) a.get()[0]).hasBurst());
    }

    static Stream<Arguments> only(Algorithm algorithm) {
        return everyAlgorithm().filter(a -> a.get()[0] == algorithm);
    }

    static Stream<Arguments> fixedWindow() {
        return only(FIXED_WINDOW);
    }

    static Stream<Arguments> slidingWindow() {
        return only(SLIDING_WINDOW);
    }

    static Stream<Arguments> slidingLog() {
        return only(SLIDING_LOG);
    }

    private static final Limit TEN_PER_100S = Limit.of("changed", 10, Duration.ofSeconds(100));

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

    private static final Limit DAILY = Limit.of("changed", 1000, Duration.ofDays(1));

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
    // ---- refunds (charge=after): RateLimiter.refund, RateLimitStore.refund ----

    private RateLimiter limiter(RateLimitStore store, Limit... limits) {
        return RateLimiter.builder().limits(List.of(limits)).store(store).timeout(PATIENT).build();
    }

    private static Decision reserve(RateLimitStore store, String caller, Limit limit, double maxWaitSeconds) {
        return store.reserve(caller, List.of(limit), seconds(maxWaitSeconds)).toCompletableFuture().join();
    }

    /**
     * Reservations ({@code acquire}): five fit now; each one after queues behind the ones before
     * it, at the instant its limit admits it; one that cannot be served within its longest wait is
     * refused with the wait it would need and spends nothing; a refunded reservation gives its
     * slot to the next one.
     */
    static Stream<Arguments> everyAlgorithmThatWaits() {
        return everyAlgorithm().filter(a -> a.get()[0] != SLIDING_LOG);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithmThatWaits")
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
        assertThat(again.retryAfter()).as(where + ": the refunded slot is the next one's").isEqualTo(seconds(waits[0]));
        Decision seventh = reserve(store, caller, limit, 1000);
        assertThat(seventh.retryAfter()).as(where + ": the seventh queues behind the sixth").isEqualTo(seconds(waits[1]));

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

    private static RateLimitStore.Booking book(RateLimitStore store, String caller, Limit limit, double maxWaitSeconds) {
        return store.book(caller, List.of(limit), seconds(maxWaitSeconds)).toCompletableFuture().join();
    }

    /**
     * Reservations given up by their waiters ({@link RateLimitStore#giveBack}): the quota used is
     * what was sent, and no two calls share a slot. Five fit now; A, B and C wait. C, the last,
     * given up: the next reservation, D, gets C's slot. B, given up while C's slot is taken by D
     * behind it: a bucket keeps B's slot, and the next reservation takes it before it extends the
     * schedule (the one after goes after D); a window lowers B's window's count, whose order
     * within does not matter, so the next gets B's place.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithmThatWaits")
    void aReservationGivenUpAheadReturnsItsSlotWhereNoTwoCallsShareOne(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimitStore store = newStore(clock);
        Limit limit = FIVE.withAlgorithm(algorithm);
        String caller = "give-back-" + UUID.randomUUID();
        // the waits of A, B and C, made at 0 s, and of the next after B is given up behind D
        double[] waits = switch (algorithm) {
            // one token per 20 s; B's slot at 40 s, given back, is the next one's
            case TOKEN_BUCKET, GCRA -> new double[] {20, 40, 60, 40};
            // the next window holds five; B's place in it is free again
            case FIXED_WINDOW -> new double[] {100, 100, 100, 100};
            // A, B, C in the next window at 5 * (100 - e) / 100 + counted + 1 <= 5; B given
            // back, two counted there (A, D): the next fits where D did
            case SLIDING_WINDOW -> new double[] {120, 140, 160, 160};
            case SLIDING_LOG, CONCURRENCY -> throw new IllegalArgumentException("cannot wait: " + algorithm);
        };
        String where = algorithm + " on " + storeName();
        for (int i = 0; i < 5; i++) {
            assertThat(book(store, caller, limit, 0).decision().retryAfter()).as(where + ": reservation " + i).isZero();
        }
        RateLimitStore.Booking a = book(store, caller, limit, 1000);
        RateLimitStore.Booking b = book(store, caller, limit, 1000);
        RateLimitStore.Booking c = book(store, caller, limit, 1000);
        assertThat(List.of(a, b, c)).as(where).allMatch(booked -> booked.decision().outcome() == Decision.Outcome.ALLOWED);
        assertThat(c.decision().retryAfter()).as(where + ": C queues behind A and B").isEqualTo(seconds(waits[2]));

        store.giveBack(caller, List.of(limit), c).toCompletableFuture().join();
        RateLimitStore.Booking d = book(store, caller, limit, 1000);
        assertThat(d.decision().retryAfter()).as(where + ": C's slot, given up, is D's").isEqualTo(seconds(waits[2]));

        store.giveBack(caller, List.of(limit), b).toCompletableFuture().join();
        Decision next = reserve(store, caller, limit, 1000);
        assertThat(next.retryAfter()).as(where + ": B given up behind D").isEqualTo(seconds(waits[3]));
        if (algorithm.hasBurst()) {
            assertThat(reserve(store, caller, limit, 1000).retryAfter()).as(where + ": B's slot is taken once; "
                    + "the next goes after D").isEqualTo(seconds(80));
        }
        assertThat(a.decision().retryAfter()).as(where).isEqualTo(seconds(waits[0]));
        assertThat(b.decision().retryAfter()).as(where).isEqualTo(seconds(waits[1]));
    }

    /**
     * Slots given up anywhere in the schedule come back: eight waiters on a limit of one call a
     * second (burst 1) hold the slots at 1 to 8 s behind a first call at 0 s; at 2.5 s on the
     * store's clock they all give up, in the order they booked, the first three by cancelling
     * their stage, the next three interrupted in {@code acquire}, the last two by an
     * {@code orTimeout} on their stage. The next caller gets the earliest given-up slot still ahead, 3 s, about
     * one second away, rather than queueing behind the given-up ones; seven more get 4 s, 5 s and
     * on. Asserted on the store's granted slots (its clock when booked plus the wait it answered),
     * never on the wall clock: every slot granted and kept is at least a second from any other.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("buckets")
    void slotsGivenUpAnywhereInTheScheduleGoToTheNextCallers(Algorithm algorithm) throws Exception {
        ManualClock clock = new ManualClock();
        RecordingStore store = new RecordingStore(newStore(clock), clock);
        Limit limit = Limit.of("given-up", 1, Duration.ofSeconds(1)).withBurst(1).withAlgorithm(algorithm);
        RateLimiter limiter = RateLimiter.builder().limit(limit).store(store).timeout(PATIENT).build();
        String caller = "given-up-" + UUID.randomUUID();
        String where = algorithm + " on " + storeName();
        Duration patient = Duration.ofSeconds(30);
        long start = clock.nowMicros();
        assertThat(limiter.acquire(caller, Duration.ZERO).retryAfter()).as(where + ": the first call").isZero();

        List<java.util.concurrent.CompletableFuture<Decision>> stages = new ArrayList<>();
        List<Thread> sleepers = new ArrayList<>();
        List<Throwable> thrown = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 1; i <= 8; i++) {
            if (i >= 4 && i <= 6) {
                Thread sleeper = new Thread(() -> {
                    try {
                        limiter.acquire(caller, patient);
                    } catch (Throwable e) {
                        thrown.add(e);
                    }
                });
                sleeper.start();
                sleepers.add(sleeper);
            } else {
                // the last two get their orTimeout when they give up, so that none goes before all are booked
                stages.add(limiter.acquireAsync(caller, patient));
            }
            store.awaitBookings(1 + i); // in order: waiter i holds the slot at i seconds
        }
        assertThat(store.slots()).as(where + ": booked").containsExactly(start, start + 1_000_000, start + 2_000_000,
                start + 3_000_000, start + 4_000_000, start + 5_000_000, start + 6_000_000, start + 7_000_000,
                start + 8_000_000);

        clock.advance(Duration.ofMillis(2_500));
        for (int i = 0; i < 3; i++) {
            assertThat(stages.get(i).cancel(false)).as(where + ": waiter %d cancels", i + 1).isTrue();
            store.awaitGivenBack(i + 1);
        }
        for (Thread sleeper : sleepers) {
            awaitSleeping(sleeper);
            sleeper.interrupt();
            sleeper.join(PATIENT.toMillis());
        }
        assertThat(thrown).as(where + ": the interrupted waiters").hasSize(3)
                .allMatch(e -> e instanceof InterruptedException);
        for (int i = 3; i < 5; i++) {
            stages.get(i).orTimeout(10, java.util.concurrent.TimeUnit.MILLISECONDS);
            assertThat(stages.get(i)).as(where + ": waiter %d times out", i + 4).failsWithin(PATIENT);
            store.awaitGivenBack(i + 4);
        }

        List<Long> granted = new ArrayList<>(List.of(start));
        List<java.util.concurrent.CompletableFuture<Decision>> next = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                next.add(limiter.acquireAsync(caller, patient));
                store.awaitBookings(10 + i);
                long slot = store.slots().get(9 + i);
                if (i == 0) {
                    assertThat(slot - clock.nowMicros()).as(where + ": the next caller's wait, in store microseconds, "
                            + "after eight slots were given up at 2.5 s").isLessThanOrEqualTo(1_000_000);
                }
                granted.add(slot);
            }
        } finally {
            next.forEach(stage -> stage.cancel(false)); // their timers go with them
        }
        assertThat(granted).as(where + ": the slots given up and still ahead, in order, then the schedule's")
                .containsExactly(start, start + 3_000_000, start + 4_000_000, start + 5_000_000, start + 6_000_000,
                        start + 7_000_000, start + 8_000_000, start + 9_000_000, start + 10_000_000);
        assertSpacedApart(granted, 1_000_000, where);
    }

    /**
     * A reservation that waited for nothing, given up: the unit comes back while nothing is
     * booked after it, as for one ahead; a booking no store made ({@code NOWHERE}) gives back nothing.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void aReservationGivenUpAtOnceReturnsItsUnitWhileItIsTheLast(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimitStore store = newStore(clock);
        Limit limit = FIVE.withAlgorithm(algorithm);
        String caller = "give-back-now-" + UUID.randomUUID();
        String where = algorithm + " on " + storeName();
        for (int i = 0; i < 4; i++) {
            book(store, caller, limit, 0);
        }
        RateLimitStore.Booking fifth = book(store, caller, limit, 0);
        assertThat(fifth.decision().retryAfter()).as(where).isZero();
        store.giveBack(caller, List.of(limit), new RateLimitStore.Booking(fifth.decision(), RateLimitStore.Booking.NOWHERE))
                .toCompletableFuture().join();
        assertThat(reserve(store, caller, limit, 0).outcome()).as(where + ": nothing comes back without the ends")
                .isEqualTo(Decision.Outcome.REJECTED);
        store.giveBack(caller, List.of(limit), fifth).toCompletableFuture().join();
        Decision again = reserve(store, caller, limit, 0);
        assertThat(again.outcome()).as(where + ": the fifth's unit, given back").isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(again.remaining()).as(where).isZero();
        assertThat(reserve(store, caller, limit, 0).outcome()).as(where + ": one unit only").isEqualTo(Decision.Outcome.REJECTED);
    }

    /**
     * A provider's pause ({@link RateLimitStore#pause}): nothing until it ends, then the budget
     * comes back at the limit's pace (no burst); a shorter pause after it changes nothing.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithmThatWaits")
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

    /** A paused sliding log lets units go one by one from the pause's end, as a bucket refilling from empty. */
    @org.junit.jupiter.api.Test
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
        assertThat(store.decide(caller, List.of(limit)).toCompletableFuture().join().allowed()).as(storeName()).isTrue();
        assertThat(store.decide(caller, List.of(limit)).toCompletableFuture().join().allowed())
                .as(storeName() + ": no burst").isFalse();
        clock.set(start + 190_000_000);
        assertThat(store.decide(caller, List.of(limit)).toCompletableFuture().join().allowed()).as(storeName()).isTrue();
    }

    /**
     * A sliding log reserves nothing ahead: entries stamped ahead would have to outlive the ones
     * they replace, for a refund; its reservation takes only what it has now, whatever the wait.
     */
    @org.junit.jupiter.api.Test
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
        assertThat(reserve(store, caller, five, 0).outcome()).as(where + ": the refusal spent nothing of the other limit")
                .isEqualTo(Decision.Outcome.ALLOWED);
        Decision waited = store.reserve(caller, both, seconds(500)).toCompletableFuture().join();
        assertThat(waited.outcome()).as(where).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(waited.retryAfter()).as(where).isEqualTo(seconds(500));
        assertThat(waited.quotas()).as(where + ": as of the reserved instant").allMatch(q -> q.allowed());
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
        assertThat(changed.decide(caller).remaining()).as(algorithm.configName()).isEqualTo(algorithm.hasBurst() ? 4 : 5);
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
    // ---- concurrency leases: ConcurrencyLimiter, RateLimitStore.acquireLease / releaseLease ----

    private static final Limit THREE_IN_FLIGHT = Limit.concurrency("in-flight", 3, Duration.ofSeconds(100));

    private ConcurrencyLimiter concurrency(RateLimitStore store) {
        return ConcurrencyLimiter.builder().limit(THREE_IN_FLIGHT).store(store).timeout(PATIENT).build();
    }

    private static void assertLease(Lease lease, boolean held, long remaining, double next, double retry, String where) {
        Decision d = lease.decision();
        assertThat(d.storeFailed()).as(where + ": store failed").isFalse();
        assertThat(lease.held()).as(where + ": held").isEqualTo(held);
        assertThat(d.allowed()).as(where + ": allowed").isEqualTo(held);
        assertThat(d.remaining()).as(where + ": remaining").isEqualTo(remaining);
        assertThat(d.binding().nextUnit()).as(where + ": next").isEqualTo(seconds(next));
        assertThat(d.retryAfter()).as(where + ": retry-after").isEqualTo(seconds(retry));
    }

    @org.junit.jupiter.api.Test
    void leasesCapRequestsInFlightAndAReturnedLeaseAdmitsTheNext() {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        ConcurrencyLimiter limiter = concurrency(newStore(clock));
        String caller = "lease-" + UUID.randomUUID();
        Lease first = limiter.acquire(caller);
        assertLease(first, true, 2, 100, 0, "first");
        clock.set(start + 10_000_000);
        Lease second = limiter.acquire(caller);
        assertLease(second, true, 1, 90, 0, "second");
        assertThat(second.decision().reset()).as("until the last lease expires").isEqualTo(Duration.ofSeconds(100));
        Lease third = limiter.acquire(caller);
        assertLease(third, true, 0, 90, 0, "third");
        Lease fourth = limiter.acquire(caller);
        assertLease(fourth, false, 0, 90, 1, "fourth: refused, retry at most 1 s");
        assertThat(limiter.acquire("lease-other-" + UUID.randomUUID()).held()).as("another caller").isTrue();

        fourth.release(); // holds nothing: returns nothing
        assertLease(limiter.acquire(caller), false, 0, 90, 1, "still three held");
        first.release();
        first.release(); // once only
        Lease fifth = limiter.acquire(caller);
        assertLease(fifth, true, 0, 100, 0, "the returned place");
        assertLease(limiter.acquire(caller), false, 0, 100, 1, "full again");
    }

    @org.junit.jupiter.api.Test
    void aLeaseLeftBehindExpiresAfterTheLease() {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimitStore store = newStore(clock);
        String caller = "lease-dead-" + UUID.randomUUID();
        ConcurrencyLimiter dead = concurrency(store);
        for (int i = 0; i < 3; i++) {
            clock.set(start + i * 1_000_000L);
            assertThat(dead.acquire(caller).held()).isTrue();
        }
        ConcurrencyLimiter next = concurrency(store);
        clock.set(start + 99_999_999);
        assertLease(next.acquire(caller), false, 0, 0.000001, 0.000001, "just before the first lease expires");
        clock.set(start + 100_000_000);
        assertLease(next.acquire(caller), true, 0, 1, 0, "the first lease expired");
        clock.set(start + 250_000_000);
        Lease all = next.acquire(caller);
        assertLease(all, true, 2, 100, 0, "every lease expired");
        all.release();
        assertLease(next.acquire(caller), true, 2, 100, 0, "returned");
    }

    // ---- cap changes: a redeploy with another limit or lease, while callers hold leases ----

    private ConcurrencyLimiter cap(RateLimitStore store, long count, long leaseSeconds) {
        return ConcurrencyLimiter.builder().limit(Limit.concurrency("in-flight", count, Duration.ofSeconds(leaseSeconds)))
                .store(store).failureMode(dev.sluice.FailureMode.CLOSED).timeout(PATIENT).build();
    }

    /** Takes a lease of {@code caller} at {@code at} seconds from {@code start}; it must be granted. */
    private static Lease take(ConcurrencyLimiter limiter, ManualClock clock, long start, double at, String caller) {
        clock.set(start + Math.round(at * 1_000_000));
        Lease lease = limiter.acquire(caller);
        assertThat(lease.held()).as("a lease taken at %s s under %s", at, limiter.limit()).isTrue();
        return lease;
    }

    @org.junit.jupiter.api.Test
    void aLoweredCapRefusesCallersOverItUntilTheirLeasesComeBack() {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimitStore store = newStore(clock);
        String caller = "cap-lowered-" + UUID.randomUUID();
        ConcurrencyLimiter five = cap(store, 5, 100);
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            held.add(take(five, clock, start, i, caller)); // expiring at 100, 101, 102, 103, 104 s
        }
        ConcurrencyLimiter two = cap(store, 2, 100);
        clock.set(start + 10_000_000);
        // five held under a cap of two: a place comes back when the fourth-oldest lease expires (103 s)
        for (int i = 0; i < 2 * 5; i++) {
            Lease over = two.acquire(caller);
            assertThat(over.decision().outcome()).as("over the lowered cap, attempt %d", i).isEqualTo(Decision.Outcome.REJECTED);
            assertLease(over, false, 0, 93, 1, "five held under a cap of two, attempt " + i);
            assertWithinTheLimit(over.decision(), two.limit(), "five held under a cap of two");
        }
        assertThat(two.storeFailures()).as("refusals over a lowered cap are no store failures").isZero();
        assertThat(two.acquire("cap-other-" + UUID.randomUUID()).decision().outcome())
                .as("another caller, after ten refusals over the cap: the circuit is closed").isEqualTo(Decision.Outcome.ALLOWED);
        held.get(3).release();
        held.get(4).release();
        assertLease(two.acquire(caller), false, 0, 91, 1, "three held (100, 101, 102 s): a place at 101 s");
        held.get(2).release();
        assertLease(two.acquire(caller), false, 0, 90, 1, "two held: full");
        held.get(1).release();
        Lease fits = two.acquire(caller);
        assertLease(fits, true, 0, 90, 0, "one held: a place under the new cap");
        assertThat(fits.decision().reset()).as("until the last lease expires").isEqualTo(Duration.ofSeconds(100));
        assertLease(two.acquire(caller), false, 0, 90, 1, "full under the new cap");
        assertThat(two.storeFailures()).isZero();
    }

    @org.junit.jupiter.api.Test
    void aLoweredCapCountsTheLeasesTakenUnderTheOldOneUntilTheyExpire() {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimitStore store = newStore(clock);
        String caller = "cap-expiring-" + UUID.randomUUID();
        ConcurrencyLimiter five = cap(store, 5, 100);
        for (int i = 0; i < 5; i++) {
            take(five, clock, start, i, caller); // never returned: an instance that died mid-request
        }
        ConcurrencyLimiter two = cap(store, 2, 100);
        clock.set(start + 101_500_000);
        assertLease(two.acquire(caller), false, 0, 1.5, 1, "three left (102, 103, 104 s): a place at 103 s");
        clock.set(start + 102_500_000);
        assertLease(two.acquire(caller), false, 0, 0.5, 0.5, "two left (103, 104 s) under a cap of two");
        clock.set(start + 103_000_000);
        assertLease(two.acquire(caller), true, 0, 1, 0, "one left: a place");
        assertThat(two.storeFailures()).isZero();
    }

    @org.junit.jupiter.api.Test
    void aRaisedCapAdmitsAtOnceCountingTheLeasesHeld() {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimitStore store = newStore(clock);
        String caller = "cap-raised-" + UUID.randomUUID();
        ConcurrencyLimiter two = cap(store, 2, 100);
        Lease first = take(two, clock, start, 0, caller);
        take(two, clock, start, 1, caller);
        assertLease(two.acquire(caller), false, 0, 99, 1, "full under a cap of two");
        ConcurrencyLimiter five = cap(store, 5, 100);
        clock.set(start + 2_000_000);
        assertLease(five.acquire(caller), true, 2, 98, 0, "two held under a cap of five");
        assertLease(five.acquire(caller), true, 1, 98, 0, "three held");
        assertLease(five.acquire(caller), true, 0, 98, 0, "four held");
        assertLease(five.acquire(caller), false, 0, 98, 1, "five held: full");
        first.release();
        assertLease(five.acquire(caller), true, 0, 99, 0, "the returned place");
        assertThat(five.storeFailures()).isZero();
    }

    @org.junit.jupiter.api.Test
    void aShortenedLeaseBoundsTheLeasesAlreadyHeldAndALengthenedOneExtendsNone() {
        ManualClock clock = new ManualClock();
        long start = clock.nowMicros();
        RateLimitStore store = newStore(clock);
        String caller = "lease-shortened-" + UUID.randomUUID();
        ConcurrencyLimiter hundred = cap(store, 3, 100);
        take(hundred, clock, start, 0, caller);
        take(hundred, clock, start, 0, caller);
        // under a lease of 10 s, the leases taken under 100 s expire at the latest 10 s from now
        ConcurrencyLimiter ten = cap(store, 3, 10);
        clock.set(start + 5_000_000);
        Lease shortened = ten.acquire(caller);
        assertLease(shortened, true, 0, 10, 0, "two held, bounded to the new lease");
        assertThat(shortened.decision().reset()).isEqualTo(Duration.ofSeconds(10));
        assertWithinTheLimit(shortened.decision(), ten.limit(), "under the shortened lease");
        clock.set(start + 15_000_000);
        assertLease(ten.acquire(caller), true, 2, 10, 0, "every lease expired with the new lease");
        // a lengthened lease leaves the leases held as they were: the one taken at 15 s expires at 25 s
        clock.set(start + 20_000_000);
        Lease lengthened = hundred.acquire(caller);
        assertLease(lengthened, true, 1, 5, 0, "one held under 10 s, one new under 100 s");
        assertThat(lengthened.decision().reset()).isEqualTo(Duration.ofSeconds(100));
    }

    /** Waits until {@code thread} sleeps (for its slot), at most {@link #PATIENT}. */
    private static void awaitSleeping(Thread thread) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENT.toNanos();
        while (thread.getState() != Thread.State.TIMED_WAITING && thread.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
    }

    /** Asserts that no two of {@code slots} (store microseconds) are closer than {@code apart}. */
    static void assertSpacedApart(List<Long> slots, long apart, String where) {
        List<Long> sorted = new ArrayList<>(slots);
        sorted.sort(null);
        for (int i = 1; i < sorted.size(); i++) {
            assertThat(sorted.get(i) - sorted.get(i - 1)).as(where + ": slots granted at %s (store microseconds), "
                    + "apart by at least %d", sorted, apart).isGreaterThanOrEqualTo(apart);
        }
    }

    /**
     * A store that records each booking's granted slot, as the store's own clock puts it (its time
     * when booking, plus the wait it answered), and counts the give-backs it has completed.
     */
    static final class RecordingStore implements RateLimitStore {
        private final RateLimitStore store;
        private final TimeSource clock;
        private final List<Long> slots = new ArrayList<>();
        private int givenBack;

        RecordingStore(RateLimitStore store, TimeSource clock) {
            this.store = store;
            this.clock = clock;
        }

        @Override
        public java.util.concurrent.CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
            long now = clock.nowMicros();
            return store.book(caller, limits, maxWait).thenApply(booking -> {
                if (booking.decision().outcome() == Decision.Outcome.ALLOWED) {
                    synchronized (this) {
                        slots.add(now + booking.decision().retryAfter().toNanos() / 1_000);
                        notifyAll();
                    }
                }
                return booking;
            });
        }

        @Override
        public java.util.concurrent.CompletionStage<Void> giveBack(String caller, List<Limit> limits, Booking booking) {
            return store.giveBack(caller, limits, booking).thenRun(() -> {
                synchronized (this) {
                    givenBack++;
                    notifyAll();
                }
            });
        }

        @Override
        public java.util.concurrent.CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return store.decide(caller, limits);
        }

        @Override
        public java.util.concurrent.CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
            return book(caller, limits, maxWait).thenApply(Booking::decision);
        }

        /** The slots granted so far, in the order they were booked. */
        synchronized List<Long> slots() {
            return List.copyOf(slots);
        }

        synchronized void awaitBookings(int n) throws InterruptedException {
            long deadline = System.nanoTime() + PATIENT.toNanos();
            while (slots.size() < n && System.nanoTime() < deadline) {
                wait(10);
            }
            assertThat(slots).as("bookings granted").hasSizeGreaterThanOrEqualTo(n);
        }

        synchronized void awaitGivenBack(int n) throws InterruptedException {
            long deadline = System.nanoTime() + PATIENT.toNanos();
            while (givenBack < n && System.nanoTime() < deadline) {
                wait(10);
            }
            assertThat(givenBack).as("give-backs done").isGreaterThanOrEqualTo(n);
        }

        @Override
        public void close() {
            store.close();
        }
    }
}
