package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.internal.Keys;
import dev.sluice.spi.LimitKeys;
import dev.sluice.testing.TestCluster;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
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
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real Redis Cluster of three masters on loopback, through Lettuce's cluster client: every
 * algorithm and a multi-limit decision run without CROSSSLOT; three stores, each on a cluster
 * client of its own, admit exactly the limit of one caller; and many callers at once, spread over
 * every master (so one coalesced call holds batches for several masters), each get exactly theirs.
 */
class LettuceClusterTest {

    private static TestCluster cluster;
    private static final List<RedisClusterClient> CLIENTS = new ArrayList<>();
    private static final List<LettuceStore> STORES = new ArrayList<>();

    @BeforeAll
    static void startCluster() {
        cluster = new TestCluster(3);
        for (int i = 0; i < 3; i++) {
            List<RedisURI> nodes = new ArrayList<>();
            for (int port : cluster.ports()) {
                nodes.add(RedisURI.create("127.0.0.1", port));
            }
            RedisClusterClient client = RedisClusterClient.create(nodes);
            CLIENTS.add(client);
            STORES.add(LettuceStore.of(client));
        }
    }

    @AfterAll
    static void stopCluster() {
        STORES.forEach(LettuceStore::close);
        CLIENTS.forEach(RedisClusterClient::shutdown);
        if (cluster != null) {
            cluster.close();
        }
    }

    private static RateLimiter limiter(LettuceStore store, Limit... limits) {
        return RateLimiter.builder().limits(List.of(limits)).store(store).failureMode(FailureMode.CLOSED)
                .timeout(Duration.ofSeconds(10)).build();
    }

    @Test
    void everyAlgorithmAndSeveralLimitsDecideTogetherOnTheCluster() {
        List<Limit> all = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.rates()) {
            all.add(Limit.of("lcl-" + LimitKeys.suffix(algorithm), "3/1m").withAlgorithm(algorithm));
        }
        RateLimiter limiter = limiter(STORES.get(0), all.toArray(new Limit[0]));
        String caller = "lettuce-cluster-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            Decision decision = limiter.decide(caller);
            assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(decision.quotas()).extracting(Decision.Quota::remaining).containsOnly(2L - i);
        }
        assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.REJECTED);
    }

    @Test
    void threeStoresAdmitExactlyTheLimitOfOneCaller() throws Exception {
        for (Algorithm algorithm : Algorithm.rates()) {
            Limit hundred = Limit.of("lcl-race", 100, Duration.ofDays(366)).withAlgorithm(algorithm);
            List<RateLimiter> nodes = STORES.stream().map(store -> limiter(store, hundred)).toList();
            String caller = "lcl-race-" + UUID.randomUUID();
            assertThat(race(8, t -> nodes.get(t % 3), t -> caller, 250)).as(algorithm.configName()).isEqualTo(100);
        }
    }

    @Test
    void callersOnEveryMasterAtOnceEachGetTheirLimit() throws Exception {
        Limit ten = Limit.of("lcl-many", 10, Duration.ofDays(366));
        List<RateLimiter> nodes = STORES.stream().map(store -> limiter(store, ten)).toList();
        List<String> callers = new ArrayList<>();
        Set<Integer> slots = new HashSet<>();
        for (int i = 0; i < 24; i++) {
            String caller = "lcl-many-" + i + "-" + UUID.randomUUID();
            callers.add(caller);
            slots.add(SlotHash.getSlot(LimitKeys.key(Keys.tag(caller), ten)));
        }
        // TestCluster gives each of its three masters a third of the slots, in order
        assertThat(slots.stream().map(slot -> Math.min(slot / (16384 / 3), 2)).distinct().count())
                .as("masters the callers are on").isEqualTo(3);
        // 24 threads, each its own caller, through three stores: calls coalesce callers of several masters
        int admitted = race(24, t -> nodes.get(t % 3), callers::get, 40);
        assertThat(admitted).isEqualTo(24 * 10);
    }

    /** {@code threads} threads, each deciding {@code attempts} times for its caller; the admissions of all. */
    private static int race(int threads, IntFunction<RateLimiter> node, IntFunction<String> caller, int attempts)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                RateLimiter limiter = node.apply(t);
                String who = caller.apply(t);
                results.add(pool.submit(() -> {
                    int admitted = 0;
                    for (int i = 0; i < attempts; i++) {
                        Decision decision = limiter.decide(who);
                        assertThat(decision.storeFailed()).as("store failure").isFalse();
                        admitted += decision.allowed() ? 1 : 0;
                    }
                    return admitted;
                }));
            }
            int total = 0;
            for (Future<Integer> result : results) {
                total += result.get(120, TimeUnit.SECONDS);
            }
            return total;
        } finally {
            pool.shutdownNow();
        }
    }
}
