package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import dev.sluice.internal.UnreadableStateException;
import dev.sluice.metrics.MicrometerMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@link MicrometerMetrics} publishes beyond decisions, against a real {@link SimpleMeterRegistry}. */
class StoreMetricsTest {

    private static final Duration TIMEOUT = Duration.ofMillis(100);

    /**
     * A store failing every decision with what {@code failure} gives, or never answering when it gives {@code null}.
     */
    private record Failing(Supplier<Throwable> failure) implements RateLimitStore {
        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            Throwable t = failure.get();
            return t == null ? new CompletableFuture<>() : CompletableFuture.failedFuture(t);
        }

        @Override
        public void close() {
        }
    }

    /** Named as Redis clients name theirs: a connection failure is known by its type's name. */
    private static final class RedisConnectionException extends RuntimeException {
        RedisConnectionException(String message) {
            super(message);
        }
    }

    private static double errors(SimpleMeterRegistry registry, String policy, String type) {
        return registry.get("sluice.store.errors").tag("policy", policy).tag("error.type", type).counter().count();
    }

    private static RateLimiter limiter(SimpleMeterRegistry registry, String policy, Supplier<Throwable> failure) {
        return RateLimiter.builder().limit(Limit.of(policy, "10/1m")).store(new Failing(failure)).timeout(TIMEOUT)
                .listener(MicrometerMetrics.of(registry, policy)).build();
    }

    @Test
    void storeErrorsAreTaggedByKind() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        assertThat(limiter(registry, "slow", () -> null).decide("c").outcome()).isEqualTo(Decision.Outcome.FAILED_OPEN);
        limiter(registry, "refused", () -> new ConnectException("Connection refused")).decide("c");
        limiter(registry, "client", () -> new RedisConnectionException("Unable to connect to 127.0.0.1:1")).decide("c");
        limiter(registry, "lua", () -> new RuntimeException("ERR user_script:1: attempt to call a nil value"))
                .decide("c");
        limiter(registry, "wrongtype", () -> new UnreadableStateException("a key holds another type",
                new RuntimeException("WRONGTYPE"))).decide("c");
        limiter(registry, "odd", () -> new IllegalStateException("no idea")).decide("c");

        assertThat(errors(registry, "slow", "timeout")).isEqualTo(1);
        assertThat(errors(registry, "refused", "connection")).isEqualTo(1);
        assertThat(errors(registry, "client", "connection")).isEqualTo(1);
        assertThat(errors(registry, "lua", "script")).isEqualTo(1);
        assertThat(errors(registry, "wrongtype", "unreadable_state")).isEqualTo(1);
        assertThat(errors(registry, "odd", "other")).isEqualTo(1);
        assertThat(registry.get("sluice.store.errors").counters().stream().mapToDouble(c -> c.count()).sum())
                .as("each failure counted once, under one kind").isEqualTo(6);
    }

    @Test
    void decisionsWhileTheCircuitIsOpenAreCountedAsCircuitOpen() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RateLimiter limiter = limiter(registry, "broken", () -> new ConnectException("Connection refused"));
        for (int i = 0; i < CircuitBreaker.THRESHOLD; i++) {
            limiter.decide("c");
        }
        assertThat(limiter.storeCircuitOpen()).isTrue();
        limiter.decide("c");
        limiter.decide("c");
        assertThat(errors(registry, "broken", "connection")).isEqualTo(CircuitBreaker.THRESHOLD);
        assertThat(errors(registry, "broken", "circuit_open")).isEqualTo(2);
        assertThat(limiter.storeFailures()).isEqualTo(CircuitBreaker.THRESHOLD + 2);
    }

    @Test
    void concurrencyLeasesCountStoreErrorsByKindToo() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder()
                .limit(Limit.concurrency("reports", 2, Duration.ofSeconds(30)))
                .store(new LeaseFailing()).timeout(TIMEOUT)
                .listener(MicrometerMetrics.of(registry, "reports")).build();
        assertThat(limiter.acquire("c").decision().outcome()).isEqualTo(Decision.Outcome.FAILED_OPEN);
        assertThat(errors(registry, "reports", "connection")).isEqualTo(1);
    }

    /** A store whose leases fail to connect. */
    private static final class LeaseFailing implements RateLimitStore {
        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CompletionStage<Decision> acquireLease(String caller, Limit limit, String leaseId) {
            return CompletableFuture.failedFuture(new ConnectException("Connection refused"));
        }

        @Override
        public void close() {
        }
    }

    @Test
    void refundsAreCountedWhetherTheStoreConfirmedThemOrNot() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("charged", "2/1m"))
                .listener(MicrometerMetrics.of(registry, "charged")).build();
        limiter.decide("c");
        assertThat(limiter.refund("c")).isTrue();
        assertThat(limiter.refund("c")).isTrue();
        RateLimiter failing = limiter(registry, "unrefunded", () -> new ConnectException("Connection refused"));
        assertThat(failing.refund("c")).as("the failing store cannot refund").isFalse();

        assertThat(registry.get("sluice.refunds").tag("policy", "charged").tag("outcome", "refunded").counter().count())
                .isEqualTo(2);
        assertThat(registry.get("sluice.refunds").tag("policy", "charged").tag("outcome", "failed").counter().count())
                .isZero();
        assertThat(registry.get("sluice.refunds").tag("policy", "unrefunded").tag("outcome", "failed").counter()
                .count())
                .isEqualTo(1);
    }

    /** A store failing, or holding its answer back for the test to give, or deciding in memory. */
    private static final class Switchable implements RateLimitStore {
        final RateLimitStore memory = StoreProvider.forStore("memory").open("memory");
        volatile boolean failing = true;

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            if (failing) {
                return CompletableFuture.failedFuture(new ConnectException("Connection refused"));
            }
            CompletableFuture<Decision> answer = new CompletableFuture<>();
            answering = () -> memory.decide(caller, limits).thenAccept(answer::complete);
            return answer;
        }

        volatile Runnable answering;

        @Override
        public void close() {
        }
    }

    @Test
    void theCircuitsStateIsAGauge() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Switchable store = new Switchable();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("tripped", "10/1m")).store(store)
                .timeout(Duration.ofSeconds(5))
                .listener(MicrometerMetrics.of(registry, "tripped")).build();
        assertThat(circuit(registry, "tripped")).as("closed").isZero();
        for (int i = 0; i < CircuitBreaker.THRESHOLD; i++) {
            limiter.decide("c");
        }
        assertThat(limiter.storeCircuitOpen()).isTrue();
        assertThat(circuit(registry, "tripped")).as("open").isEqualTo(1);

        Thread.sleep(600); // past the first pause (250 ms): the next decision is the probe
        store.failing = false;
        CompletableFuture<Decision> probe = limiter.decideAsync("c").toCompletableFuture();
        assertThat(circuit(registry, "tripped")).as("half-open while the probe is out").isEqualTo(0.5);
        store.answering.run();
        assertThat(probe.get().outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(circuit(registry, "tripped")).as("closed by the probe's success").isZero();
    }

    private static double circuit(SimpleMeterRegistry registry, String policy) {
        return registry.get("sluice.store.circuit").tag("policy", policy).gauge().value();
    }

    @Test
    void leasesInFlightAreAGauge() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder()
                .limit(Limit.concurrency("exports", 2, Duration.ofSeconds(30)))
                .listener(MicrometerMetrics.of(registry, "exports")).build();
        assertThat(leases(registry, "exports")).isZero();
        Lease first = limiter.acquire("a");
        Lease second = limiter.acquire("b");
        Lease third = limiter.acquire("b");
        Lease refused = limiter.acquire("b");
        assertThat(refused.decision().allowed()).isFalse();
        assertThat(leases(registry, "exports")).as("three held, the refused one holds none").isEqualTo(3);
        first.release();
        first.release();
        refused.release();
        assertThat(leases(registry, "exports")).as("released once each; the refused one never held").isEqualTo(2);
        second.close();
        third.close();
        assertThat(leases(registry, "exports")).isZero();
    }

    private static double leases(SimpleMeterRegistry registry, String policy) {
        return registry.get("sluice.leases.active").tag("policy", policy).gauge().value();
    }

    @Test
    void theRegistryKeepsNoLimiterAlive() throws InterruptedException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WeakReference<RateLimiter> limiter = dropped(registry);
        WeakReference<ConcurrencyLimiter> capped = droppedCap(registry);
        for (int i = 0; i < 100 && (limiter.get() != null || capped.get() != null); i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertThat(limiter.get()).as("the rate limiter, collected").isNull();
        assertThat(capped.get()).as("the concurrency limiter, collected").isNull();
        assertThat(circuit(registry, "gone")).as("a gauge of a collected limiter").isNaN();
    }

    private static WeakReference<RateLimiter> dropped(SimpleMeterRegistry registry) {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("gone", "1/1m"))
                .listener(MicrometerMetrics.of(registry, "gone")).build();
        limiter.decide("c");
        return new WeakReference<>(limiter);
    }

    private static WeakReference<ConcurrencyLimiter> droppedCap(SimpleMeterRegistry registry) {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder()
                .limit(Limit.concurrency("gone-cap", 1, Duration.ofSeconds(30)))
                .listener(MicrometerMetrics.of(registry, "gone-cap")).build();
        limiter.acquire("c").release();
        return new WeakReference<>(limiter);
    }
}
