package dev.sluice;

import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.LettuceStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
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
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * 2,000 attempts from 8 threads at one caller with a limit of 100 in a long window admit exactly
 * 100, for every algorithm: in memory (one store, many threads) and in Redis on each client (three
 * application nodes, each a store on a client of its own, on the server's clock); and a Lettuce
 * store beside a Redisson store counts in the same keys by the same scripts.
 */
class ConcurrencyTest {

    private static final int THREADS = 8;
    private static final int ATTEMPTS = 2_000;
    private static final Limit HUNDRED = Limit.of("concurrency", 100, Duration.ofDays(366));

    private static final List<RedissonClient> REDISSON = new ArrayList<>();
    private static final List<RedisClient> LETTUCE = new ArrayList<>();

    /** The Redis clients, each making three application nodes' stores. */
    enum Client {
        /** Each node a store on a Redisson client of its own, borrowed. */
        REDISSON {
            @Override
            List<RateLimitStore> threeNodes(List<AutoCloseable> opened) {
                return ConcurrencyTest.REDISSON.stream().<RateLimitStore>map(RedisStore::of).toList();
            }
        },
        /** A Lettuce store made each way: on a borrowed client, on its own client, on a borrowed connection. */
        LETTUCE {
            @Override
            List<RateLimitStore> threeNodes(List<AutoCloseable> opened) {
                StatefulRedisConnection<String, String> borrowed = ConcurrencyTest.LETTUCE.get(1)
                        .connect(StringCodec.UTF8);
                opened.add(borrowed);
                return List.of(LettuceStore.of(ConcurrencyTest.LETTUCE.get(0)),
                        LettuceStore.connect("lettuce:" + TestRedis.shared().url()), LettuceStore.of(borrowed));
            }
        };

        /** Three stores on the shared Redis; what else they needed opened is added to {@code opened}. */
        abstract List<RateLimitStore> threeNodes(List<AutoCloseable> opened);
    }

    @BeforeAll
    static void clients() {
        for (int i = 0; i < 3; i++) {
            REDISSON.add(TestRedis.shared().newClient());
        }
        for (int i = 0; i < 2; i++) {
            LETTUCE.add(RedisClient.create(TestRedis.shared().url()));
        }
    }

    @AfterAll
    static void shutdown() {
        REDISSON.forEach(RedissonClient::shutdown);
        LETTUCE.forEach(RedisClient::shutdown);
    }

    static Stream<Arguments> clientsAndAlgorithms() {
        return Stream.of(Client.values())
                .flatMap(client -> Algorithm.rates().stream().map(algorithm -> Arguments.of(client, algorithm)));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void inMemoryExactlyTheLimitIsAdmitted(Algorithm algorithm) throws Exception {
        RateLimiter limiter = RateLimiter.builder().limit(HUNDRED.withAlgorithm(algorithm)).store(MemoryStore.create())
                .build();
        assertThat(race(List.of(limiter))).isEqualTo(100);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("clientsAndAlgorithms")
    void onRedisThreeNodesOnClientsOfTheirOwnAdmitExactlyTheLimit(Client client, Algorithm algorithm)
            throws Exception {
        List<AutoCloseable> opened = new ArrayList<>();
        List<RateLimitStore> stores = client.threeNodes(opened);
        try {
            List<RateLimiter> nodes = new ArrayList<>();
            for (RateLimitStore store : stores) {
                nodes.add(RateLimiter.builder().limit(HUNDRED.withAlgorithm(algorithm)).store(store)
                        .timeout(Stores.PATIENT).failureMode(FailureMode.CLOSED).build());
            }
            assertThat(race(nodes)).isEqualTo(100);
        } finally {
            for (RateLimitStore store : stores) {
                store.close();
            }
            for (AutoCloseable resource : opened) {
                resource.close();
            }
        }
    }

    @Test
    void aLettuceStoreAndARedissonStoreShareOneBudget() throws Exception {
        Limit limit = HUNDRED.withAlgorithm(Algorithm.TOKEN_BUCKET);
        LettuceStore lettuce = LettuceStore.of(LETTUCE.get(0));
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
