package dev.sluice.tck;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.params.provider.Arguments;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static dev.sluice.Algorithm.FIXED_WINDOW;
import static dev.sluice.Algorithm.SLIDING_LOG;
import static dev.sluice.Algorithm.SLIDING_WINDOW;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every group of the kit shares: the store under test, the algorithms its parameterized tests
 * run over, and the small vocabulary of the scenarios. A group that needs a {@link Capability} says
 * so with {@link Needs}, and does not run at all on a store that leaves it out.
 *
 * <p>Times are in seconds from a start aligned to every window, with long periods (100 s) so that
 * real-time TTLs (a Redis key's) never expire state in the middle of a scenario.
 */
abstract class Scenarios {

    /**
     * The timeout of scenarios that test decisions rather than deadlines: long enough that a busy
     * two-core CI machine never turns a slow answer into a failure decision.
     */
    static final Duration PATIENT = Duration.ofSeconds(20);

    static final Limit FIVE = Limit.of("conformance", 5, Duration.ofSeconds(100));

    static final Limit TEN_PER_100S = Limit.of("changed", 10, Duration.ofSeconds(100));

    private final RateLimitStoreKit kit;

    Scenarios(RateLimitStoreKit kit) {
        this.kit = kit;
    }

    /** Whether the store under test declares {@code capability} supported. */
    final boolean supports(Capability capability) {
        return kit.supports(capability);
    }

    final RateLimitStore newStore(TimeSource time) {
        return kit.newStore(time);
    }

    final List<RateLimitStore> sharedInstances() {
        return kit.sharedInstances();
    }

    final String storeName() {
        return kit.getClass().getSimpleName();
    }

    static Stream<Arguments> everyAlgorithm() {
        List<Arguments> cases = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.rates()) {
            cases.add(Arguments.of(algorithm));
        }
        return cases.stream();
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

    /** The algorithms whose reservations wait ahead: a sliding log reserves only what it has now. */
    static Stream<Arguments> everyAlgorithmThatWaits() {
        return everyAlgorithm().filter(a -> a.get()[0] != SLIDING_LOG);
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

    /** Asserts that {@code d}, decided under {@code limit}, is the decision {@code step} must get. */
    static void assertStep(Decision d, Step step, Limit limit, String where) {
        assertThat(d.allowed()).as(where + ": allowed").isEqualTo(step.allowed());
        assertThat(d.remaining()).as(where + ": remaining").isEqualTo(step.remaining());
        assertThat(d.reset()).as(where + ": reset").isEqualTo(seconds(step.reset()));
        assertThat(d.retryAfter()).as(where + ": retry-after").isEqualTo(seconds(step.retry()));
        if (!d.allowed() && limit.cost() == 1 && step.cost() <= 1) {
            assertThat(d.binding().nextUnit()).as(where + ": the next unit of a refused request of cost 1")
                    .isEqualTo(d.retryAfter());
        }
    }

    static Duration seconds(double s) {
        return Duration.ofNanos(Math.round(s * 1_000_000) * 1_000);
    }

    static RateLimiter limiter(RateLimitStore store, Limit... limits) {
        return RateLimiter.builder().limits(List.of(limits)).store(store).timeout(PATIENT).build();
    }

    static Decision reserve(RateLimitStore store, String caller, Limit limit, double maxWaitSeconds) {
        return store.reserve(caller, List.of(limit), seconds(maxWaitSeconds)).toCompletableFuture().join();
    }
}
