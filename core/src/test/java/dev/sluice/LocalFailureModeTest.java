package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.memory.MemoryStore;
import dev.sluice.metrics.MicrometerMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link FailureMode#LOCAL}: while the store fails, a limiter in this JVM decides with the limits
 * scaled by the local share; when the store answers, it decides again. The store here is a real
 * {@link MemoryStore} behind a switch that makes it fail (a hand-written fault injection); Redis,
 * stalled and killed, is in the redis module's {@code LocalFailureModeTest} and over HTTP in the
 * servlet filter's.
 */
class LocalFailureModeTest {

    private static final Duration TIMEOUT = Duration.ofMillis(50);

    /** A memory store that fails, or never answers, while told to. */
    private static final class Switchable implements RateLimitStore {
        final MemoryStore memory = MemoryStore.create();
        volatile boolean failing;
        volatile boolean silent;
        int asked;

        @Override
        public synchronized CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            asked++;
            if (silent) {
                return new CompletableFuture<>();
            }
            return failing ? CompletableFuture.failedFuture(new IllegalStateException("connection refused"))
                    : memory.decide(caller, limits);
        }

        @Override
        public void close() {
        }
    }

    private static RateLimiter limiter(Switchable store, Limit limit, double share) {
        return RateLimiter.builder().limit(limit).store(store).failureMode(FailureMode.LOCAL).localShare(share)
                .timeout(TIMEOUT).build();
    }

    @Test
    void whileTheStoreFailsTheScaledLocalBudgetDecidesThenTheStoreAgain() throws InterruptedException {
        Switchable store = new Switchable();
        Limit limit = Limit.of("api", 10, Duration.ofHours(1)).withAlgorithm(Algorithm.FIXED_WINDOW);
        RateLimiter limiter = limiter(store, limit, 0.33);
        assertThat(limiter.localLimits()).singleElement()
                .satisfies(l -> assertThat(l.count()).as("round(10 * 0.33)").isEqualTo(3));

        assertThat(limiter.decide("c").outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        store.failing = true;
        for (int i = 0; i < 3; i++) {
            Decision local = limiter.decide("c");
            assertThat(local.outcome()).as("local request %d", i + 1).isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
            assertThat(local.allowed()).isTrue();
            assertThat(local.local()).isTrue();
            assertThat(local.storeFailed()).isTrue();
            assertThat(local.capacity()).as("the local capacity").isEqualTo(3);
            assertThat(local.remaining()).isEqualTo(2 - i);
        }
        Decision refused = limiter.decide("c");
        assertThat(refused.outcome()).isEqualTo(Decision.Outcome.LOCAL_REJECTED);
        assertThat(refused.allowed()).isFalse();
        assertThat(refused.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofHours(1));
        assertThat(refused.quotas()).singleElement().satisfies(q -> assertThat(q.allowed()).isFalse());
        assertThat(limiter.decide("other").outcome()).as("another caller's local budget")
                .isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
        assertThat(limiter.storeFailures()).isEqualTo(5);

        store.failing = false;
        // five failures opened the circuit: local decisions (charging the store nothing) until a probe passes
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Decision back = limiter.decide("c");
        while (back.local() && System.nanoTime() < deadline) {
            Thread.sleep(10);
            back = limiter.decide("c");
        }
        assertThat(back.outcome()).as("the store decides again, with its own count")
                .isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(back.capacity()).isEqualTo(10);
        assertThat(back.remaining()).isEqualTo(8);
    }

    @Test
    void anOpenCircuitDecidesLocallyWithoutAskingTheStore() {
        Switchable store = new Switchable();
        store.failing = true;
        RateLimiter limiter = limiter(store, Limit.of("api", 7, Duration.ofHours(1)), 1.0);
        for (int i = 0; i < 7; i++) {
            assertThat(limiter.decide("c").outcome()).isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
        }
        assertThat(limiter.storeCircuitOpen()).isTrue();
        int asked = store.asked;
        long started = System.nanoTime();
        assertThat(limiter.decide("c").outcome()).isEqualTo(Decision.Outcome.LOCAL_REJECTED);
        if (System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(200)) {
            // within the breaker's first pause no probe passes (a stalled machine may see one)
            assertThat(store.asked).as("the open circuit asked nobody").isEqualTo(asked);
        }
    }

    @Test
    void aTimedOutRequestIsChargedLocallyOnceOnEitherPath() {
        Switchable store = new Switchable();
        store.silent = true;
        RateLimiter limiter = limiter(store, Limit.of("api", 4, Duration.ofHours(1)), 1.0);
        for (int i = 0; i < 4; i++) {
            Decision decision = i % 2 == 0 ? limiter.decide("c")
                    : limiter.decideAsync("c").toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).join();
            assertThat(decision.outcome()).isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
            assertThat(decision.remaining()).as("each timed-out request spent one local unit").isEqualTo(3 - i);
        }
        assertThat(limiter.decide("c").outcome()).isEqualTo(Decision.Outcome.LOCAL_REJECTED);
    }

    @Test
    void localStateOutlivesAFlapButGoesOnceTheStoreHasAnsweredLongEnough() throws InterruptedException {
        Switchable store = new Switchable();
        // an hour's bucket: a state the store's brief return must not forget
        RateGuard kept = RateGuard.of(store, FailureMode.LOCAL, TIMEOUT, "[kept]");
        List<Limit> hourly = List.of(Limit.of("kept", 2, Duration.ofHours(1)));
        store.failing = true;
        kept.await("c", hourly, System.nanoTime());
        kept.await("c", hourly, System.nanoTime());
        store.failing = false;
        assertThat(kept.await("c", hourly, System.nanoTime()).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(kept.holdsLocalState()).isTrue();
        store.failing = true;
        assertThat(kept.await("c", hourly, System.nanoTime()).outcome())
                .as("a flapping store gives no fresh local budget")
                .isEqualTo(Decision.Outcome.LOCAL_REJECTED);

        // a 100 ms bucket is whole again 100 ms after its last use: then the state can go
        Switchable quick = new Switchable();
        RateGuard dropped = RateGuard.of(quick, FailureMode.LOCAL, TIMEOUT, "[dropped]");
        List<Limit> brief = List.of(Limit.of("dropped", 1_000, Duration.ofMillis(100)));
        quick.failing = true;
        assertThat(dropped.await("c", brief, System.nanoTime()).outcome()).isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
        quick.failing = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (dropped.holdsLocalState() && System.nanoTime() < deadline) {
            Thread.sleep(20); // bounded: the store answers every 20 ms
            assertThat(dropped.await("c", brief, System.nanoTime()).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        }
        assertThat(dropped.holdsLocalState()).as("dropped after the store answered for the bucket's refill time")
                .isFalse();
    }

    @Test
    void shadowModeLetsALocalRejectionThroughAndMetricsCountLocalDecisionsApart() {
        Switchable store = new Switchable();
        store.failing = true;
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RateLimiter shadow = RateLimiter.builder().limit(Limit.of("shadowed", 1, Duration.ofHours(1))).store(store)
                .failureMode(FailureMode.LOCAL).timeout(TIMEOUT).shadowMode(true)
                .listener(MicrometerMetrics.of(registry, "shadowed")).build();
        assertThat(shadow.decide("c").outcome()).isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
        Decision letThrough = shadow.decide("c");
        assertThat(letThrough.outcome()).isEqualTo(Decision.Outcome.SHADOW_REJECTED);
        assertThat(letThrough.allowed()).isTrue();
        assertThat(shadow.shadowRejections()).isEqualTo(1);

        RateLimiter enforcing = RateLimiter.builder().limit(Limit.of("counted", 2, Duration.ofHours(1))).store(store)
                .failureMode(FailureMode.LOCAL).timeout(TIMEOUT).listener(MicrometerMetrics.of(registry, "counted"))
                .build();
        for (int i = 0; i < 3; i++) {
            enforcing.decide("c");
        }
        assertThat(registry.counter("sluice.decisions", "policy", "counted", "outcome", "local_allowed").count())
                .isEqualTo(2);
        assertThat(registry.counter("sluice.decisions", "policy", "counted", "outcome", "local_rejected").count())
                .isEqualTo(1);
        assertThat(registry.counter("sluice.decisions", "policy", "counted", "outcome", "allowed").count()).isZero();
        assertThat(registry.counter("sluice.store.errors", "policy", "counted", "error.type", "other").count())
                .isEqualTo(3);
    }

    @Test
    void scalingRoundsToTheNearestUnitKeepsAtLeastOneAndCapsTheCost() {
        assertThat(LocalLimiter.scale(Limit.of("a", "10/1m"), 0.33).count()).isEqualTo(3);
        assertThat(LocalLimiter.scale(Limit.of("a", "100/1m"), 0.33).count()).isEqualTo(33);
        assertThat(LocalLimiter.scale(Limit.of("a", "2/1m"), 0.25).count()).as("0.5 rounds up").isEqualTo(1);
        assertThat(LocalLimiter.scale(Limit.of("a", "5/1m"), 0.01).count()).as("at least 1").isEqualTo(1);
        Limit bucket = LocalLimiter.scale(Limit.of("a", "10/s").withBurst(30).withCost(20), 0.5);
        assertThat(List.of(bucket.count(), bucket.burst(), bucket.cost())).containsExactly(5L, 15L, 15L);
        assertThat(bucket.period()).isEqualTo(Duration.ofSeconds(1));
        Limit window = LocalLimiter.scale(Limit.of("a", "9/1h").withAlgorithm(Algorithm.SLIDING_WINDOW), 0.5);
        assertThat(List.of(window.count(), window.burst())).containsExactly(5L, 5L);
        Limit whole = Limit.of("a", "10/1m");
        assertThat(LocalLimiter.scale(whole, 1.0)).as("share 1 keeps the limit itself").isSameAs(whole);
    }

    @ParameterizedTest
    @ValueSource(doubles = {0, -0.5, 1.01, 2, Double.NaN, Double.POSITIVE_INFINITY})
    void aLocalShareOutsideZeroToOneIsRefusedNamingIt(double share) {
        assertThatThrownBy(() -> RateLimiter.builder().localShare(share))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'local-share' must be a fraction greater than 0 and at most 1 (e.g. 0.33), got '" + share
                        + "'");
    }
}
