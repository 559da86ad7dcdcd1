package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hot key: concurrent requests of one caller are coalesced into fewer script calls, each still
 * getting its own exact decision; an over-limit caller is refused locally until its retry-after,
 * without a round trip, and never past it. Runs on a Redis of its own so that script calls can be
 * counted.
 */
class HotKeyTest {

    private static TestRedis redis;
    private static RedissonClient client;

    @BeforeAll
    static void start() {
        redis = TestRedis.start();
        client = redis.newClient();
    }

    @AfterAll
    static void stop() {
        client.shutdown();
        redis.stop();
    }

    private static long scriptCalls() {
        var stats = client.getRedisNodes(RedisNodes.SINGLE).getInstance().info(RedisNode.InfoSection.COMMANDSTATS);
        return calls(stats.get("cmdstat_evalsha")) + calls(stats.get("cmdstat_eval"));
    }

    private static long calls(String stat) {
        return stat == null ? 0 : Long.parseLong(stat.replaceAll("^calls=(\\d+),.*", "$1"));
    }

    @Test
    void concurrentRequestsOfOneCallerShareScriptCallsAndEachGetsItsOwnExactDecision() throws Exception {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("hot", 100, Duration.ofDays(366)))
                .store(RedisStore.builder().client(client).localRejections(0).build())
                .failureMode(FailureMode.CLOSED).timeout(Stores.PATIENT).build();
        String caller = "hot-" + UUID.randomUUID();
        limiter.decide(caller); // loads the script: the first of the 100
        long before = scriptCalls();
        ConcurrentLinkedQueue<Long> remainders = new ConcurrentLinkedQueue<>();
        int threads = 16;
        int attempts = 2_000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    go.await();
                    int admitted = 0;
                    for (int i = 0; i < attempts / threads; i++) {
                        Decision decision = limiter.decide(caller);
                        assertThat(decision.storeFailed()).isFalse();
                        if (decision.allowed()) {
                            admitted++;
                            remainders.add(decision.remaining());
                        }
                    }
                    return admitted;
                }));
            }
            go.countDown();
            int total = 0;
            for (Future<Integer> result : results) {
                total += result.get(60, TimeUnit.SECONDS);
            }
            assertThat(total).isEqualTo(99);
        } finally {
            pool.shutdownNow();
        }
        long calls = scriptCalls() - before;
        assertThat(remainders).as("each admitted request saw its own place in line")
                .containsExactlyInAnyOrderElementsOf(
                java.util.stream.LongStream.range(0, 99).boxed().toList());
        assertThat(calls).as("script calls for %d decisions", attempts).isLessThan(attempts);
    }

    @Test
    void anOverLimitCallerIsRefusedLocallyUntilItsRetryAfterAndNotAfter() {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("flood", "5/1m"))
                .store(RedisStore.forTesting(client, clock)).timeout(Stores.PATIENT).build();
        String caller = "flood-" + UUID.randomUUID();
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.decide(caller).allowed()).isTrue();
        }
        Decision first = limiter.decide(caller);
        assertThat(first.allowed()).isFalse();
        assertThat(first.retryAfter()).isEqualTo(Duration.ofSeconds(12));

        long before = scriptCalls();
        int flood = 1_000;
        for (int i = 0; i < flood; i++) {
            clock.advance(Duration.ofMillis(10)); // 10 s in all, still inside the 12 s
            Decision refused = limiter.decide(caller);
            assertThat(refused.allowed()).isFalse();
            assertThat(refused.remaining()).isZero();
        }
        long calls = scriptCalls() - before;
        assertThat((double) calls / flood).as("Redis calls per refused request").isLessThanOrEqualTo(0.05);
        Decision late = limiter.decide(caller);
        assertThat(late.retryAfter()).as("the local wait counts down").isEqualTo(Duration.ofSeconds(2));

        clock.advance(Duration.ofSeconds(2)); // exactly the retry-after: Redis decides again
        assertThat(limiter.decide(caller).allowed()).isTrue();
        assertThat(scriptCalls() - before).isEqualTo(calls + 1);
    }

    @Test
    void theLocalRefusalCanBeSwitchedOff() {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("uncached", "1/1m"))
                .store(RedisStore.builder().client(client).timeSourceForTesting(clock).localRejections(0).build())
                .timeout(Stores.PATIENT).build();
        String caller = "uncached-" + UUID.randomUUID();
        assertThat(limiter.decide(caller).allowed()).isTrue();
        long before = scriptCalls();
        for (int i = 0; i < 20; i++) {
            assertThat(limiter.decide(caller).allowed()).isFalse();
        }
        assertThat(scriptCalls() - before).isEqualTo(20);
    }
}
