package dev.sluice;

import dev.sluice.redis.RedisStore;
import dev.sluice.testing.Stores;
import dev.sluice.testing.StallingProxy;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RateLimiter#decideAsync}: the same decisions as the blocking call, and the same deadline. */
class AsyncDecisionTest {

    @Test
    void asyncDecisionsOnRedisAdmitExactlyTheLimitInOrder() throws Exception {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("async", "5/1m"))
                .store(RedisStore.of(Stores.client()))
                .timeout(Stores.PATIENT).build();
        String caller = "async-" + UUID.randomUUID();
        List<CompletableFuture<Decision>> pending = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            pending.add(limiter.decideAsync(caller).toCompletableFuture());
        }
        int allowed = 0;
        for (CompletableFuture<Decision> future : pending) {
            Decision decision = future.get(30, TimeUnit.SECONDS);
            assertThat(decision.storeFailed()).isFalse();
            allowed += decision.allowed() ? 1 : 0;
        }
        assertThat(allowed).isEqualTo(5);
        assertThat(limiter.decideAsync(caller, 6).toCompletableFuture().get().outcome())
                .isEqualTo(Decision.Outcome.UNSATISFIABLE);
    }

    @Test
    void anAsyncDecisionOnAStalledRedisCompletesWithinTheTimeout() throws Exception {
        TestRedis redis = TestRedis.shared();
        try (StallingProxy proxy = new StallingProxy(redis.port())) {
            RedissonClient client = TestRedis.client(proxy.url());
            try {
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("async-stall", "5/1m"))
                        .store(RedisStore.of(client)).failureMode(FailureMode.CLOSED).timeout(Duration.ofMillis(200))
                        .build();
                String caller = "async-stall-" + UUID.randomUUID();
                limiter.decide(caller); // connects
                proxy.stall();
                long started = System.nanoTime();
                Decision decision = limiter.decideAsync(caller).toCompletableFuture().get(10, TimeUnit.SECONDS);
                assertThat(decision.outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
            } finally {
                proxy.release();
                client.shutdown();
            }
        }
    }
}
