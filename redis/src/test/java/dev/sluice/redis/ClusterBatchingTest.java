package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.internal.Keys;
import dev.sluice.spi.LimitKeys;
import dev.sluice.testing.TestCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Batching across callers on a real Redis Cluster of three masters: a call's batches spread over
 * the slots go out in one pipeline, each decided right (even when every node has forgotten the
 * script), and many callers from many threads are each admitted exactly their limit.
 */
class ClusterBatchingTest {

    private static final long LATER = System.nanoTime() + TimeUnit.HOURS.toNanos(1);

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

    /**
     * The first call is held (its replies wait for a gate) so that 200 callers wait; they then go
     * in one pipelined call. The script is flushed from every node meanwhile: each batch is
     * answered NOSCRIPT, sent again in full, and still charged once.
     */
    @Test
    void callersWaitingTogetherGoInOnePipelineAcrossTheSlotsEachDecidedOnce() throws Exception {
        RedissonClient client = store.client();
        DecideScript script = new DecideScript(new RedissonCalls(client), null);
        script.load();
        ClusterCalls pipeline = new ClusterCalls(client, script);
        CompletableFuture<Void> gate = new CompletableFuture<>();
        List<Integer> sizes = new CopyOnWriteArrayList<>();
        Coalescer coalescer = new Coalescer(batches -> {
            sizes.add(batches.size());
            List<CompletableFuture<IntFunction<Decision>>> replies = pipeline.decide(batches);
            if (sizes.size() > 1) {
                return replies;
            }
            List<CompletableFuture<IntFunction<Decision>>> held = new ArrayList<>();
            replies.forEach(reply -> held.add(reply.thenCombine(gate, (decisions, open) -> decisions)));
            return held;
        }, 1, true, Coalescer.NEVER_LATE);
        List<Limit> limits = List.of(Limit.of("piped", "1/1h"),
                Limit.of("piped-gcra", "1/1h").withAlgorithm(Algorithm.GCRA));
        String run = UUID.randomUUID().toString();
        CompletableFuture<Decision> first = coalescer.decide(new StorageKey(Keys.tag("first-" + run), limits), LATER);
        List<String> callers = new ArrayList<>();
        List<CompletableFuture<Decision>> decisions = new ArrayList<>();
        for (int c = 0; c < 200; c++) {
            callers.add("piped-" + c + "-" + run);
        }
        for (int r = 0; r < 2; r++) {
            for (String caller : callers) {
                decisions.add(coalescer.decide(new StorageKey(Keys.tag(caller), limits), LATER));
            }
        }
        client.getScript().scriptFlush();
        gate.complete(null);
        assertThat(first.get(10, TimeUnit.SECONDS).allowed()).isTrue();
        for (int i = 0; i < decisions.size(); i++) {
            Decision decision = decisions.get(i).get(10, TimeUnit.SECONDS);
            assertThat(decision.allowed()).as("request %d of %s", i / 200, callers.get(i % 200)).isEqualTo(i < 200);
            assertThat(decision.quotas()).extracting(Decision.Quota::remaining).containsOnly(0L);
        }
        assertThat(sizes).as("the held call, then every caller's batch in one").containsExactly(1, 200);
        Set<Integer> slots = new HashSet<>();
        callers.forEach(caller -> slots.add(client.getKeys().getSlot("{" + Keys.tag(caller) + "}")));
        assertThat(slots).as("distinct slots among the callers").hasSizeGreaterThan(150);
        assertThat(coalescer.inFlight()).isZero();
    }

    @Test
    void manyCallersFromManyThreadsAreEachAdmittedExactlyTheirLimit() throws Exception {
        for (Algorithm algorithm : Algorithm.rates()) {
            int limit = 3;
            RateLimiter limiter = RateLimiter.builder()
                    .limit(Limit.of("cl-exact-" + LimitKeys.suffix(algorithm), limit, Duration.ofHours(1))
                            .withAlgorithm(algorithm))
                    .store(store).failureMode(FailureMode.CLOSED).timeout(Duration.ofSeconds(20)).build();
            String run = UUID.randomUUID().toString();
            List<String> requests = new ArrayList<>();
            for (int c = 0; c < 300; c++) {
                for (int r = 0; r < 5; r++) {
                    requests.add("cl-exact-" + c + "-" + run);
                }
            }
            Collections.shuffle(requests);
            Map<String, AtomicInteger> admitted = new ConcurrentHashMap<>();
            AtomicInteger next = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(32);
            try {
                List<Future<?>> workers = new ArrayList<>();
                for (int t = 0; t < 32; t++) {
                    workers.add(pool.submit(() -> {
                        for (int i = next.getAndIncrement(); i < requests.size(); i = next.getAndIncrement()) {
                            Decision decision = limiter.decide(requests.get(i));
                            assertThat(decision.storeFailed()).isFalse();
                            if (decision.allowed()) {
                                admitted.computeIfAbsent(requests.get(i), c -> new AtomicInteger()).incrementAndGet();
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
            assertThat(admitted).as(algorithm.configName()).hasSize(300);
            assertThat(admitted.values()).as(algorithm.configName()).extracting(AtomicInteger::get).containsOnly(limit);
        }
        assertThat(store.requestsInFlight()).isZero();
    }
}
