package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.internal.Keys;
import dev.sluice.spi.LimitKeys;
import dev.sluice.testing.StallingProxy;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Batching across callers on a real Redis: many callers from many threads are each admitted
 * exactly their limit; callers that wait while a call is held go to Redis together, in one script
 * call, each decided right; one thread's decisions each go alone; and a caller whose key holds
 * another type fails alone in a call it shares with others. Runs on a Redis of its own so that
 * script calls can be counted, reached through a proxy whose replies the test can hold back.
 */
class CrossCallerBatchingTest {

    private static TestRedis redis;
    private static RedissonClient direct;
    private static StallingProxy proxy;
    private static RedissonClient proxied;

    @BeforeAll
    static void start() {
        redis = TestRedis.start();
        direct = redis.newClient();
        proxy = new StallingProxy(redis.port());
        // a timeout longer than any hold in these tests: a held call must come back, not time out
        Config config = new Config();
        config.useSingleServer().setAddress(proxy.url()).setTimeout(15_000).setRetryAttempts(0)
                .setConnectionMinimumIdleSize(2).setConnectionPoolSize(16)
                .setSubscriptionConnectionMinimumIdleSize(0).setSubscriptionConnectionPoolSize(1);
        proxied = Redisson.create(config);
    }

    @AfterAll
    static void stop() {
        proxied.shutdown();
        proxy.close();
        direct.shutdown();
        redis.stop();
    }

    private static long scriptCalls() {
        var stats = direct.getRedisNodes(RedisNodes.SINGLE).getInstance().info(RedisNode.InfoSection.COMMANDSTATS);
        return calls(stats.get("cmdstat_evalsha")) + calls(stats.get("cmdstat_eval"));
    }

    private static long calls(String stat) {
        return stat == null ? 0 : Long.parseLong(stat.replaceAll("^calls=(\\d+),.*", "$1"));
    }

    private static RedisStore store() {
        return RedisStore.builder().client(proxied).localRejections(0).build();
    }

    private static Decision join(CompletableFuture<Decision> decision) throws Exception {
        return decision.get(10, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void callersWaitingWhileACallIsHeldGoInOneScriptCallEachDecidedRight(Algorithm algorithm) throws Exception {
        RedisStore store = store();
        List<Limit> limits = List.of(Limit.of("together", 1, Duration.ofHours(1)).withAlgorithm(algorithm));
        store.decide("warm-" + UUID.randomUUID(), limits).toCompletableFuture().get(10, TimeUnit.SECONDS);
        long before = scriptCalls();
        String run = UUID.randomUUID().toString();
        List<String> callers = new ArrayList<>();
        for (int c = 0; c < 100; c++) {
            callers.add("together-" + c + "-" + run);
            callers.add("together-" + c + "-" + run); // a caller's second request: refused, limit 1
        }
        List<CompletableFuture<Decision>> decisions = new ArrayList<>();
        CompletableFuture<Decision> held;
        proxy.stall();
        try {
            held = store.decide("held-" + run, limits).toCompletableFuture();
            for (String caller : callers) {
                decisions.add(store.decide(caller, limits).toCompletableFuture());
            }
            assertThat(store.requestsInFlight()).as("the held call, and one batch per caller waiting").isEqualTo(101);
        } finally {
            proxy.release();
        }
        for (int i = 0; i < decisions.size(); i++) {
            Decision decision = join(decisions.get(i));
            assertThat(decision.allowed()).as("request %d of %s", i % 2, callers.get(i)).isEqualTo(i % 2 == 0);
            assertThat(decision.remaining()).isZero();
        }
        assertThat(scriptCalls() - before).as("script calls for 201 decisions: the held one, then all the rest")
                .isEqualTo(2);
        join(held);
        assertThat(store.requestsInFlight()).isZero();
    }

    @Test
    void oneThreadsDecisionsEachGoAloneAtOnce() throws Exception {
        RedisStore store = store();
        List<Limit> limits = List.of(Limit.of("alone", "5/1h"));
        store.decide("warm-" + UUID.randomUUID(), limits).toCompletableFuture().get(10, TimeUnit.SECONDS);
        long before = scriptCalls();
        for (int i = 0; i < 50; i++) {
            Decision decision =
                    join(store.decide("alone-" + i + "-" + UUID.randomUUID(), limits).toCompletableFuture());
            assertThat(decision.remaining()).isEqualTo(4);
        }
        assertThat(scriptCalls() - before).isEqualTo(50);
        assertThat(store.requestsInFlight()).isZero();
    }

    @Test
    void aCallerWhoseKeyHoldsAnotherTypeFailsAloneAndTheOthersInItsCallAreDecided() throws Exception {
        RedisStore store = store();
        Limit limit = Limit.of("wrongtype", "1/1h");
        List<Limit> limits = List.of(limit);
        store.decide("warm-" + UUID.randomUUID(), limits).toCompletableFuture().get(10, TimeUnit.SECONDS);
        String run = UUID.randomUUID().toString();
        String broken = "broken-" + run;
        direct.getList(LimitKeys.key(Keys.tag(broken), limit)).add("not a bucket");
        long before = scriptCalls();
        List<CompletableFuture<Decision>> good = new ArrayList<>();
        CompletableFuture<Decision> bad;
        CompletableFuture<Decision> held;
        proxy.stall();
        try {
            held = store.decide("held-" + run, limits).toCompletableFuture();
            for (int c = 0; c < 3; c++) {
                good.add(store.decide("fine-" + c + "-" + run, limits).toCompletableFuture());
            }
            bad = store.decide(broken, limits).toCompletableFuture();
            for (int c = 3; c < 6; c++) {
                good.add(store.decide("fine-" + c + "-" + run, limits).toCompletableFuture());
            }
        } finally {
            proxy.release();
        }
        assertThatThrownBy(() -> join(bad)).hasMessageContaining("WRONGTYPE");
        for (CompletableFuture<Decision> decision : good) {
            assertThat(join(decision).allowed()).isTrue();
            assertThat(join(decision).remaining()).isZero();
        }
        assertThat(scriptCalls() - before).as("the held call, then one for all seven").isEqualTo(2);
        join(held);
        assertThat(store.requestsInFlight()).isZero();
    }

    @Test
    void aRequestWhoseDeadlineCannotWaitIsSentAtOnceBesideTheHeldCall() throws Exception {
        RedisStore store = store();
        List<Limit> limits = List.of(Limit.of("hurried", "1/1h"));
        store.decide("warm-" + UUID.randomUUID(), limits).toCompletableFuture().get(10, TimeUnit.SECONDS);
        String run = UUID.randomUUID().toString();
        long before = scriptCalls();
        CompletableFuture<Decision> hurried;
        CompletableFuture<Decision> patient;
        CompletableFuture<Decision> held;
        proxy.stall();
        try {
            held = store.decide("held-" + run, limits).toCompletableFuture();
            hurried = store.decide("hurried-" + run, limits, System.nanoTime() - 1, false).toCompletableFuture();
            patient = store.decide("patient-" + run, limits).toCompletableFuture();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (scriptCalls() - before < 2 && System.nanoTime() - deadline < 0) {
                Thread.sleep(10);
            }
            assertThat(scriptCalls() - before)
                    .as("the held call and the hurried one reached Redis; the patient one waits")
                    .isEqualTo(2);
        } finally {
            proxy.release();
        }
        assertThat(join(hurried).allowed()).isTrue();
        assertThat(join(patient).allowed()).isTrue();
        assertThat(scriptCalls() - before).isEqualTo(3);
        join(held);
        assertThat(store.requestsInFlight()).isZero();
    }

    /** Many callers, several requests each, from 32 threads: each caller is admitted exactly its limit. */
    @ParameterizedTest
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void manyCallersFromManyThreadsAreEachAdmittedExactlyTheirLimit(Algorithm algorithm) throws Exception {
        RedisStore store = RedisStore.of(Stores.client());
        int limit = 3;
        RateLimiter limiter = RateLimiter.builder()
                .limit(Limit.of("exact-" + LimitKeys.suffix(algorithm), limit, Duration.ofHours(1))
                        .withAlgorithm(algorithm))
                .store(store).failureMode(FailureMode.CLOSED).timeout(Stores.PATIENT).build();
        String run = UUID.randomUUID().toString();
        List<String> requests = new ArrayList<>();
        for (int c = 0; c < 300; c++) {
            for (int r = 0; r < 6; r++) {
                requests.add("exact-" + c + "-" + run);
            }
        }
        Collections.shuffle(requests);
        Map<String, AtomicInteger> admitted = new ConcurrentHashMap<>();
        AtomicInteger next = new AtomicInteger();
        int threads = 32;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                workers.add(pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < requests.size(); i = next.getAndIncrement()) {
                        String caller = requests.get(i);
                        Decision decision = limiter.decide(caller);
                        assertThat(decision.storeFailed()).isFalse();
                        if (decision.allowed()) {
                            admitted.computeIfAbsent(caller, c -> new AtomicInteger()).incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> worker : workers) {
                worker.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(admitted).hasSize(300);
        assertThat(admitted.values()).extracting(AtomicInteger::get).containsOnly(limit);
        assertThat(store.requestsInFlight()).isZero();
    }
}
