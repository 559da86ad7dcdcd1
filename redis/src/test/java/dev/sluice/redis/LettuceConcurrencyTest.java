package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

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
 * Three application nodes on one Redis, each a Lettuce store of its own, share one caller's limit
 * of 100: 2,000 attempts from 8 threads admit exactly 100, for every algorithm; and a Lettuce
 * store beside a Redisson store counts in the same keys by the same scripts.
 */
class LettuceConcurrencyTest {

    private static final int THREADS = 8;
    private static final int ATTEMPTS = 2_000;
    private static final Limit HUNDRED = Limit.of("lettuce-race", 100, Duration.ofDays(366));

    private static final List<RedisClient> CLIENTS = new ArrayList<>();

    @AfterAll
    static void shutdown() {
        CLIENTS.forEach(RedisClient::shutdown);
    }

    private static RedisClient client() {
        RedisClient client = RedisClient.create(TestRedis.shared().url());
        CLIENTS.add(client);
        return client;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void threeStoresOnOwnClientsAdmitExactlyTheLimit(Algorithm algorithm) throws Exception {
        List<LettuceStore> stores = List.of(LettuceStore.of(client()), LettuceStore.connect("lettuce:"
                + TestRedis.shared().url()), LettuceStore.of(borrowedConnection()));
        try {
            List<RateLimiter> nodes = new ArrayList<>();
            for (LettuceStore store : stores) {
                nodes.add(RateLimiter.builder().limit(HUNDRED.withAlgorithm(algorithm)).store(store)
                        .timeout(Stores.PATIENT).failureMode(FailureMode.CLOSED).build());
            }
            assertThat(race(nodes)).isEqualTo(100);
        } finally {
            stores.forEach(LettuceStore::close);
        }
    }

    @Test
    void aLettuceStoreAndARedissonStoreShareOneBudget() throws Exception {
        Limit limit = HUNDRED.withAlgorithm(Algorithm.TOKEN_BUCKET);
        LettuceStore lettuce = LettuceStore.of(client());
        RedisStore redisson = RedisStore.of(Stores.client());
        try {
            List<RateLimiter> nodes = List.of(
                    RateLimiter.builder().limit(limit).store(lettuce).timeout(Stores.PATIENT)
                            .failureMode(FailureMode.CLOSED).build(),
                    RateLimiter.builder().limit(limit).store(redisson).timeout(Stores.PATIENT)
                            .failureMode(FailureMode.CLOSED).build());
            assertThat(race(nodes)).isEqualTo(100);
        } finally {
            lettuce.close();
            redisson.close();
        }
    }

    private static StatefulRedisConnection<String, String> borrowedConnection() {
        return client().connect(StringCodec.UTF8);
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
