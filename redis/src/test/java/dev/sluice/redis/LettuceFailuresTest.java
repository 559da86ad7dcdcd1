package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Lettuce store's failures follow the limiter's failure mode, bounded in time, as the Redisson
 * store's do: a Redis nothing answers for, and a Redis that stops and comes back (empty: its script
 * cache with it, so the first calls after it are answered NOSCRIPT and sent in full).
 */
class LettuceFailuresTest {

    private static final Limit THREE = Limit.of("lettuce-faults", 3, Duration.ofHours(1));

    @Test
    void aRedisThatIsNotThereFailsClosedWithinTheTimeout() {
        int port = TestRedis.freePort(); // nothing listens there
        try (LettuceStore store = LettuceStore.builder().connect("lettuce:redis://127.0.0.1:" + port)
                .startupWait(Duration.ofMillis(200)).build()) {
            RateLimiter limiter = RateLimiter.builder().limit(THREE).store(store).failureMode(FailureMode.CLOSED)
                    .timeout(Duration.ofSeconds(1)).build();
            long started = System.nanoTime();
            Decision decision = limiter.decide("nobody");
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertThat(decision.outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
            assertThat(tookMillis).as("ms to fail").isLessThan(5_000);
            assertThat(store.ready()).isFalse();
        }
    }

    @Test
    void aRedisThatStopsFailsOpenAndIsUsedAgainOnceBack() throws Exception {
        TestRedis redis = TestRedis.start();
        String caller = "faults-" + UUID.randomUUID();
        try (LettuceStore store = LettuceStore.connect("lettuce:" + redis.url())) {
            // A cold JVM on a busy machine can take seconds to load Lettuce, Netty and Reactor (8 s
            // seen): past the start-up wait. This test is about an outage, so it starts from ready.
            long ready = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!store.ready() && System.nanoTime() < ready) {
                Thread.sleep(50);
            }
            assertThat(store.ready()).as("ready within 30 s").isTrue();
            RateLimiter limiter = RateLimiter.builder().limit(THREE).store(store).failureMode(FailureMode.OPEN)
                    .timeout(Duration.ofSeconds(2)).build();
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.ALLOWED);

            redis.stop();
            long started = System.nanoTime();
            Decision down = limiter.decide(caller);
            assertThat(down.outcome()).isEqualTo(Decision.Outcome.FAILED_OPEN);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).as("ms to fail open")
                    .isLessThan(5_000);

            redis.restart(); // empty, and without the scripts
            Decision back = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline) {
                back = limiter.decide(caller);
                if (!back.storeFailed()) {
                    break;
                }
                Thread.sleep(200); // Lettuce reconnects in the background
            }
            assertThat(back).isNotNull();
            assertThat(back.outcome()).as("a decision once Redis is back").isEqualTo(Decision.Outcome.ALLOWED);
            // the state went with the old server: a fresh budget, counted exactly from here
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.REJECTED);
        } finally {
            redis.stop();
        }
    }
}
