package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.testing.ManualClock;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hot keys decided in the JVM from slices of their budget: far fewer round trips than decisions,
 * and exact across instances: three stores on three clients, many threads each, never admit more
 * than one bucket holds, and what their slices did not grant is given back in Redis on expiry and
 * on close. Runs on a Redis of its own so that script calls can be counted.
 */
class HotKeySlicesTest {

    private static final int STORES = 3;
    private static final int THREADS = 8;

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
    void aHotGlobalKeyTakesFarFewerRoundTripsThanDecisions() throws Exception {
        for (Algorithm algorithm : List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA)) {
            RedisStore store = RedisStore.builder().client(client).build();
            try {
                List<Limit> limits =
                        List.of(Limit.of("global", 1_000_000, Duration.ofSeconds(1)).withAlgorithm(algorithm));
                String caller = "global~" + UUID.randomUUID();
                store.decide(caller, limits).toCompletableFuture().join(); // the store is warm
                long before = scriptCalls();
                int decisions = 20_000;
                for (int i = 0; i < decisions; i++) {
                    assertThat(store.decide(caller, limits).toCompletableFuture().join().allowed()).isTrue();
                }
                long calls = scriptCalls() - before;
                assertThat((double) calls / decisions)
                        .as("%s: Redis script calls per decision (%d calls)", algorithm, calls)
                        .isLessThan(0.02);
            } finally {
                store.close();
            }
        }
    }

    @Test
    void threeInstancesNeverAdmitMoreThanTheBucketHoldsAndGiveBackWhatTheyDidNotGrant() throws Exception {
        // The clock stands still but when moved: a bucket of 200 a day holds exactly 200, and 100
        // more after 12 h, however long the run takes. (Redis expires keys on its own clock: a
        // state's TTL, the time it takes to refill, is long for a slow limit, so no key vanishes
        // while the test clock stands still.)
        ManualClock clock = new ManualClock();
        List<Limit> limits = List.of(Limit.of("global", 200, Duration.ofDays(1)));
        String caller = "global~" + UUID.randomUUID();
        List<RedissonClient> clients = new ArrayList<>();
        List<RedisStore> stores = new ArrayList<>();
        for (int i = 0; i < STORES; i++) {
            RedissonClient c = redis.newClient();
            clients.add(c);
            stores.add(RedisStore.builder().client(c).timeSourceForTesting(clock).localRejections(0).build());
        }
        try {
            long admitted = hammer(stores, caller, limits, 300);
            assertThat(admitted).as("admitted of 200 by %d instances", STORES).isLessThanOrEqualTo(200);
            admitted += afterExpiry(stores, caller, limits);
            assertThat(admitted).as("admitted of 200, once every slice has expired").isEqualTo(200);

            clock.advance(Duration.ofHours(12)); // 100 more
            long more = hammer(stores, caller, limits, 200);
            assertThat(more).as("admitted of the 100 refilled").isLessThanOrEqualTo(100);
            more += afterExpiry(stores, caller, limits);
            assertThat(more).isEqualTo(100);
        } finally {
            stores.forEach(RedisStore::close);
            clients.forEach(RedissonClient::shutdown);
        }
    }

    @Test
    void onTheRedisClockThreeInstancesAdmitAtMostTheBucketAndItsRefill() throws Exception {
        // 200 per 2 s: at most 200 and 100 a second after, over any span; the span of Redis's
        // decisions lies inside the one measured around the run
        List<Limit> limits = List.of(Limit.of("global", 200, Duration.ofSeconds(2)));
        String caller = "global~" + UUID.randomUUID();
        List<RedissonClient> clients = new ArrayList<>();
        List<RedisStore> stores = new ArrayList<>();
        for (int i = 0; i < STORES; i++) {
            RedissonClient c = redis.newClient();
            clients.add(c);
            stores.add(RedisStore.builder().client(c).build());
        }
        try {
            long started = System.nanoTime();
            long admitted = hammer(stores, caller, limits, 1_000);
            long elapsedMicros = (System.nanoTime() - started) / 1_000;
            long bound = 200 + elapsedMicros * 100 / 1_000_000;
            assertThat(admitted).as("admitted in %d us", elapsedMicros).isLessThanOrEqualTo(bound);
            assertThat(admitted).as("the instances together granted the whole bucket").isGreaterThanOrEqualTo(200);
        } finally {
            stores.forEach(RedisStore::close);
            clients.forEach(RedissonClient::shutdown);
        }
    }

    @Test
    void unusedSlicesComeBackOnExpiryAndOnClose() throws Exception {
        ManualClock clock = new ManualClock();
        List<Limit> limits = List.of(Limit.of("global", 100_000, Duration.ofDays(1)).withAlgorithm(Algorithm.GCRA));
        String caller = "global~" + UUID.randomUUID();
        List<RedissonClient> clients = new ArrayList<>();
        List<RedisStore> stores = new ArrayList<>();
        for (int i = 0; i < STORES; i++) {
            RedissonClient c = redis.newClient();
            clients.add(c);
            stores.add(RedisStore.builder().client(c).timeSourceForTesting(clock).build());
        }
        RedisStore observer = RedisStore.builder().client(client).timeSourceForTesting(clock).hotKeyThreshold(0)
                .build();
        try {
            long admitted = hammer(stores, caller, limits, 500);
            assertThat(admitted).isEqualTo((long) STORES * THREADS * 500);
            assertThat(stores).as("the caller was hot on every instance").allMatch(s -> s.hotKeySlices() == 1);
            // a slice lives a tenth of the period, at most 1 s: then what is left of it is given back
            Thread.sleep(1_500);
            long observed = 1;
            assertThat(remaining(observer, caller, limits)).as("Redis holds all that was not granted")
                    .isEqualTo(100_000 - admitted - observed);

            admitted += hammer(stores, caller, limits, 500);
            stores.forEach(RedisStore::close); // before the slices expire
            observed++;
            assertThat(remaining(observer, caller, limits)).as("closing gave back the slices")
                    .isEqualTo(100_000 - admitted - observed);
        } finally {
            stores.forEach(RedisStore::close);
            observer.close();
            clients.forEach(RedissonClient::shutdown);
        }
    }

    /** What Redis has left after one decision of a store deciding every request in Redis. */
    private static long remaining(RedisStore observer, String caller, List<Limit> limits) {
        Decision decision = observer.decide(caller, limits).toCompletableFuture().join();
        assertThat(decision.allowed()).isTrue();
        return decision.remaining();
    }

    /** Every thread of every store decides {@code each} requests at once; returns how many were admitted. */
    private static long hammer(List<RedisStore> stores, String caller, List<Limit> limits, int each) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(stores.size() * THREADS);
        CountDownLatch go = new CountDownLatch(1);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (RedisStore store : stores) {
                for (int t = 0; t < THREADS; t++) {
                    results.add(pool.submit(() -> {
                        go.await();
                        long admitted = 0;
                        for (int i = 0; i < each; i++) {
                            Decision decision = store.decide(caller, limits).toCompletableFuture()
                                    .get(30, TimeUnit.SECONDS);
                            assertThat(decision.outcome()).isIn(Decision.Outcome.ALLOWED, Decision.Outcome.REJECTED);
                            if (decision.allowed()) {
                                admitted++;
                            } else {
                                assertThat(decision.retryAfter()).as("a refusal says when to retry").isPositive();
                            }
                        }
                        return admitted;
                    }));
                }
            }
            go.countDown();
            long total = 0;
            for (Future<Long> result : results) {
                total += result.get(60, TimeUnit.SECONDS);
            }
            return total;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * After every slice has expired and been given back, each store decides until refused: how many
     * more were admitted (what the slices had held, given back).
     */
    private static long afterExpiry(List<RedisStore> stores, String caller, List<Limit> limits) throws Exception {
        Thread.sleep(1_500); // a slice lives a tenth of the period, at most 1 s
        long admitted = 0;
        for (RedisStore store : stores) {
            for (int i = 0; i < 300; i++) {
                if (!store.decide(caller, limits).toCompletableFuture().join().allowed()) {
                    break;
                }
                admitted++;
            }
        }
        return admitted;
    }
}
