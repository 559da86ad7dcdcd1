package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.internal.Keys;
import dev.sluice.spi.LimitKeys;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.TestCluster;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

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
 * A real Redis Cluster of three masters on loopback, on each client: Redisson configured through
 * {@code store=redisson:<yaml>}, and Lettuce's cluster client. Every algorithm and a multi-limit
 * decision run without CROSSSLOT; callers spread over the slots; three stores, each on a client of
 * its own, admit exactly the limit of one caller; and many callers at once, spread over every
 * master (so one coalesced call holds batches for several masters), each get exactly theirs.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(ClusterTest.Client.class)
class ClusterTest {

    private static TestCluster cluster;
    /** The current client's three stores, each on a client of its own. */
    private static final List<RateLimitStore> STORES = new ArrayList<>();
    /** The clients the stores borrow, shut down after them. */
    private static final List<Runnable> SHUTDOWNS = new ArrayList<>();

    @Parameter
    Client client;

    /** The clients a store can stand on, each making a store on a client of its own. */
    enum Client {
        /** A store made from {@code store=redisson:<yaml>}, owning its client. */
        REDISSON {
            @Override
            RateLimitStore newStore() {
                return RedisStore.connect("redisson:" + cluster.redissonYaml());
            }
        },
        /** A store on a Lettuce cluster client of the application's. */
        LETTUCE {
            @Override
            RateLimitStore newStore() {
                List<RedisURI> nodes = new ArrayList<>();
                for (int port : cluster.ports()) {
                    nodes.add(RedisURI.create("127.0.0.1", port));
                }
                RedisClusterClient client = RedisClusterClient.create(nodes);
                SHUTDOWNS.add(client::shutdown);
                return LettuceStore.of(client);
            }
        };

        abstract RateLimitStore newStore();
    }

    @BeforeAll
    static void startCluster() {
        cluster = new TestCluster(3);
    }

    @BeforeParameterizedClassInvocation
    static void threeStores(Client client) {
        for (int i = 0; i < 3; i++) {
            STORES.add(client.newStore());
        }
    }

    @AfterParameterizedClassInvocation
    static void closeStores() {
        STORES.forEach(RateLimitStore::close);
        STORES.clear();
        SHUTDOWNS.forEach(Runnable::run);
        SHUTDOWNS.clear();
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private static RateLimiter limiter(RateLimitStore store, Limit... limits) {
        return RateLimiter.builder().limits(List.of(limits)).store(store).failureMode(FailureMode.CLOSED)
                .timeout(Duration.ofSeconds(10)).build();
    }

    @Test
    void everyAlgorithmAndSeveralLimitsDecideTogetherOnTheCluster() {
        List<Limit> all = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.rates()) {
            all.add(Limit.of("cl-" + LimitKeys.suffix(algorithm), "3/1m").withAlgorithm(algorithm));
        }
        RateLimiter limiter = limiter(STORES.get(0), all.toArray(new Limit[0]));
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
        RateLimiter limiter = limiter(STORES.get(0), Limit.of("spread", "5/1m"));
        Set<Integer> slots = new HashSet<>();
        for (int i = 0; i < 1_000; i++) {
            String caller = "spread-" + i + "-" + UUID.randomUUID();
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            slots.add(SlotHash.getSlot("sluice:{" + caller + "}:spread:tb"));
        }
        assertThat(slots).as("distinct slots of 1,000 callers").hasSizeGreaterThan(900);
    }

    @Test
    void threeStoresAdmitExactlyTheLimitOfOneCaller() throws Exception {
        for (Algorithm algorithm : Algorithm.rates()) {
            Limit hundred = Limit.of("cl-race", 100, Duration.ofDays(366)).withAlgorithm(algorithm);
            List<RateLimiter> nodes = STORES.stream().map(store -> limiter(store, hundred)).toList();
            String caller = "cl-race-" + UUID.randomUUID();
            assertThat(race(8, t -> nodes.get(t % 3), t -> caller, 250)).as(algorithm.configName()).isEqualTo(100);
        }
    }

    @Test
    void callersOnEveryMasterAtOnceEachGetTheirLimit() throws Exception {
        Limit ten = Limit.of("cl-many", 10, Duration.ofDays(366));
        List<RateLimiter> nodes = STORES.stream().map(store -> limiter(store, ten)).toList();
        List<String> callers = new ArrayList<>();
        Set<Integer> slots = new HashSet<>();
        for (int i = 0; i < 24; i++) {
            String caller = "cl-many-" + i + "-" + UUID.randomUUID();
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
