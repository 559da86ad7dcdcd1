package dev.sluice;

import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 2,000 attempts from 8 threads at one caller with a limit of 100 in a long window admit exactly
 * 100: in memory (one store, many threads) and in Redis (three application nodes, each with its
 * own Redisson client, on the server's clock), for every algorithm.
 */
class ConcurrencyTest {

    private static final int THREADS = 8;
    private static final int ATTEMPTS = 2_000;
    private static final Limit HUNDRED = Limit.of("concurrency", 100, Duration.ofDays(366));

    private static final List<RedissonClient> CLIENTS = new ArrayList<>();

    @BeforeAll
    static void threeNodes() {
        for (int i = 0; i < 3; i++) {
            CLIENTS.add(TestRedis.shared().newClient());
        }
    }

    @AfterAll
    static void shutdown() {
        CLIENTS.forEach(RedissonClient::shutdown);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void inMemoryExactlyTheLimitIsAdmitted(Algorithm algorithm) throws Exception {
        RateLimiter limiter = RateLimiter.builder().limit(HUNDRED.withAlgorithm(algorithm)).store(MemoryStore.create())
                .build();
        assertThat(race(List.of(limiter))).isEqualTo(100);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void onRedisFromThreeClientsExactlyTheLimitIsAdmitted(Algorithm algorithm) throws Exception {
        List<RateLimiter> nodes = new ArrayList<>();
        for (RedissonClient client : CLIENTS) {
            nodes.add(RateLimiter.builder().limit(HUNDRED.withAlgorithm(algorithm)).store(RedisStore.of(client))
                    .timeout(Stores.PATIENT).failureMode(FailureMode.CLOSED).build());
        }
        assertThat(race(nodes)).isEqualTo(100);
    }

    /** Fires the attempts at one caller from all threads at once; counts admissions. */
    private static int race(List<RateLimiter> nodes) throws Exception {
        String caller = "race-" + UUID.randomUUID();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                RateLimiter node = nodes.get(t % nodes.size());
                results.add(pool.submit(() -> {
                    start.await();
                    int admitted = 0;
                    for (int i = 0; i < ATTEMPTS / THREADS; i++) {
                        Decision decision = node.decide(caller);
                        assertThat(decision.storeFailed()).as("store failure").isFalse();
                        admitted += decision.allowed() ? 1 : 0;
                    }
                    return admitted;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> result : results) {
                total += result.get(60, TimeUnit.SECONDS);
            }
            return total;
        } finally {
            pool.shutdownNow();
        }
    }
}
