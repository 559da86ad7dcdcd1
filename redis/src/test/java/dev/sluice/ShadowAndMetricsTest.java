package dev.sluice;

import dev.sluice.metrics.MicrometerMetrics;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Shadow mode lets everything through but reports and counts; metrics count every outcome. */
class ShadowAndMetricsTest {

    @Test
    void shadowModeLetsOverLimitRequestsThroughWithoutConsumingAndCountsThem() {
        ManualClock clock = new ManualClock();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("shadow", "2/1m"))
                .store(Stores.MEMORY.create(clock)).shadowMode(true)
                .listener(MicrometerMetrics.of(registry, "shadow")).build();
        assertThat(limiter.decide("c").outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(limiter.decide("c").outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        for (int i = 0; i < 3; i++) {
            Decision over = limiter.decide("c");
            assertThat(over.outcome()).isEqualTo(Decision.Outcome.SHADOW_REJECTED);
            assertThat(over.allowed()).isTrue();
            assertThat(over.remaining()).isZero();
            assertThat(over.retryAfter()).isEqualTo(Duration.ofSeconds(30));
        }
        assertThat(limiter.decide("c", 5).outcome()).as("unsatisfiable, shadowed")
                .isEqualTo(Decision.Outcome.SHADOW_REJECTED);
        clock.advance(Duration.ofSeconds(30));
        assertThat(limiter.decide("c").remaining()).as("the shadowed requests consumed nothing").isZero();
        assertThat(limiter.shadowRejections()).isEqualTo(4);
        assertThat(count(registry, "shadow", "allowed")).isEqualTo(3);
        assertThat(count(registry, "shadow", "shadow_rejected")).isEqualTo(4);
        assertThat(registry.get("sluice.decision.latency").tag("policy", "shadow").timer().count()).isEqualTo(7);
    }

    @Test
    void metricsCountRejectionsAndStoreFailures() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("metered", "1/1m"))
                .listener(MicrometerMetrics.of(registry, "metered")).build();
        limiter.decide("c");
        limiter.decide("c");
        limiter.decide("c");
        assertThat(count(registry, "metered", "allowed")).isEqualTo(1);
        assertThat(count(registry, "metered", "rejected")).isEqualTo(2);

        int closedPort = TestRedis.freePort();
        try (RedisStore down = RedisStore.connect("redis://127.0.0.1:" + closedPort)) {
            RateLimiter failing = RateLimiter.builder().limit(Limit.of("down", "1/1m")).store(down)
                    .timeout(Duration.ofMillis(200)).listener(MicrometerMetrics.of(registry, "down")).build();
            assertThat(failing.decide("c").outcome()).isEqualTo(Decision.Outcome.FAILED_OPEN);
        }
        assertThat(count(registry, "down", "failed_open")).isEqualTo(1);
        assertThat(registry.get("sluice.store.errors").tag("policy", "down").tag("error.type", "connection").counter()
                .count())
                .isEqualTo(1);
    }

    @Test
    void rejectionsRepeatedFromTheLocalCopyOfRedisAreCounted() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String caller = "copied-" + UUID.randomUUID();
        try (RedisStore redis = RedisStore.builder().connect(TestRedis.shared().url())
                .localRejectionTtl(Duration.ofSeconds(30)).build()) {
            RateLimiter limiter = RateLimiter.builder().limit(Limit.of("copied", "1/1m")).store(redis)
                    .timeout(Duration.ofSeconds(2)).listener(MicrometerMetrics.of(registry, "copied")).build();
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(limiter.decide(caller).outcome()).as("rejected by Redis, and copied")
                    .isEqualTo(Decision.Outcome.REJECTED);
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.REJECTED);
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.REJECTED);
        }
        assertThat(registry.get("sluice.rejection.cache.hits").tag("policy", "copied").counter().count())
                .as("the rejections repeated without asking Redis").isEqualTo(2);
        assertThat(count(registry, "copied", "rejected")).isEqualTo(3);
    }

    private static double count(SimpleMeterRegistry registry, String policy, String outcome) {
        return registry.get("sluice.decisions").tag("policy", policy).tag("outcome", outcome).counter().count();
    }
}
