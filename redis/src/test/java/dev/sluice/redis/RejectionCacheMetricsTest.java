package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.metrics.MicrometerMetrics;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** The rejections the Redis store's local copy answers are counted as the store's would be. */
class RejectionCacheMetricsTest {

    @Test
    void rejectionsRepeatedFromTheLocalCopyAreCounted() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RateLimitStore copied = new RejectionCache(StoreProvider.forStore("memory").open("memory"), 100,
                Duration.ofSeconds(30));
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("copied", "1/1m")).store(copied)
                .listener(MicrometerMetrics.of(registry, "copied")).build();
        assertThat(limiter.decide("c").outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(limiter.decide("c").outcome()).as("rejected by the store, and copied")
                .isEqualTo(Decision.Outcome.REJECTED);
        assertThat(limiter.decide("c").outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(limiter.decideAsync("c").toCompletableFuture().join().outcome())
                .isEqualTo(Decision.Outcome.REJECTED);
        assertThat(registry.get("sluice.rejection.cache.hits").tag("policy", "copied").counter().count())
                .as("the two rejections repeated without the store").isEqualTo(2);
        assertThat(registry.get("sluice.decisions").tag("policy", "copied").tag("outcome", "rejected").counter()
                .count())
                .as("still counted as rejections").isEqualTo(3);
    }
}
