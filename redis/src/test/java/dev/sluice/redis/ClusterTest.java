package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.spi.LimitKeys;
import dev.sluice.testing.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real Redis Cluster of three masters on loopback, configured through {@code store=redisson:<yaml>}:
 * every algorithm and a multi-limit decision run without CROSSSLOT, callers spread over the slots,
 * and exact-N holds under concurrency.
 */
class ClusterTest {

    private static TestCluster cluster;
    private static RedisStore store;

    @BeforeAll
    static void startCluster() {
        cluster = new TestCluster(3);
        store = RedisStore.connect("redisson:" + cluster.redissonYaml());
    }

    @AfterAll
    static void stopCluster() {
        if (store != null) {
            store.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private static RateLimiter limiter(Limit... limits) {
        return RateLimiter.builder().limits(List.of(limits)).store(store).failureMode(FailureMode.CLOSED)
                .timeout(Duration.ofSeconds(10)).build();
    }

    @Test
    void everyAlgorithmAndSeveralLimitsDecideTogetherOnTheCluster() {
        List<Limit> all = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.rates()) {
            all.add(Limit.of("cl-" + LimitKeys.suffix(algorithm), "3/1m").withAlgorithm(algorithm));
        }
        RateLimiter limiter = limiter(all.toArray(new Limit[0]));
        String caller = "cluster-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            Decision decision = limiter.decide(caller);
            assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(decision.quotas()).extracting(Decision.Quota::remaining).containsOnly(2L - i);
        }
        assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.REJECTED);
    }

    @Test
    void callersSpreadOverManySlots() {
        RateLimiter limiter = limiter(Limit.of("spread", "5/1m"));
        Set<Integer> slots = new HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            String caller = "spread-" + i + "-" + UUID.randomUUID();
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            slots.add(store.client().getKeys().getSlot("sluice:{" + caller + "}:spread:tb"));
        }
        assertThat(slots).as("distinct slots of 1,000 callers").hasSizeGreaterThan(900);
    }

    @Test
    void exactlyTheLimitIsAdmittedUnderConcurrency() throws Exception {
        for (Algorithm algorithm : Algorithm.rates()) {
            RateLimiter limiter = limiter(Limit.of("cl-race", 100, Duration.ofDays(366)).withAlgorithm(algorithm));
            String caller = "cl-race-" + UUID.randomUUID();
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    results.add(pool.submit(() -> {
                        int admitted = 0;
                        for (int i = 0; i < 250; i++) {
                            Decision decision = limiter.decide(caller);
                            assertThat(decision.storeFailed()).isFalse();
                            admitted += decision.allowed() ? 1 : 0;
                        }
                        return admitted;
                    }));
                }
                int total = 0;
                for (Future<Integer> result : results) {
                    total += result.get(60, TimeUnit.SECONDS);
                }
                assertThat(total).as(algorithm.configName()).isEqualTo(100);
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
