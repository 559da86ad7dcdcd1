package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.StallingProxy;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code failure-mode=local} against real Redis servers: three application instances (three
 * clients) each grant their share while Redis is stalled, and a JVM starved of CPU next to a
 * healthy Redis admits no more than the limit plus what it decided locally. Over HTTP, with Redis
 * stalled, killed and restarted: the servlet filter's {@code LocalFailureModeTest}.
 */
class LocalFailureModeTest {

    private static final int INSTANCES = 3;

    private static RateLimiter limiter(RedisStore store, Limit limit, FailureMode mode, Duration timeout) {
        return RateLimiter.builder().limit(limit).store(store).failureMode(mode).localShare(0.33).timeout(timeout)
                .build();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void threeInstancesWithAThirdEachGrantAThirdEachWhileRedisIsStalled() {
        TestRedis redis = TestRedis.start();
        List<RedissonClient> clients = new ArrayList<>();
        try (StallingProxy proxy = new StallingProxy(redis.port())) {
            Limit limit = Limit.of("thirds", 10, Duration.ofHours(1)).withAlgorithm(Algorithm.FIXED_WINDOW);
            Duration timeout = Duration.ofMillis(200);
            List<RateLimiter> instances = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                RedissonClient client = TestRedis.client(proxy.url());
                clients.add(client);
                RedisStore store = RedisStore.of(client);
                // connects without a deadline: a busy machine may take longer than the timeout
                assertThat(limiter(store, limit, FailureMode.CLOSED, Duration.ofSeconds(20)).decide("warm-up")
                        .outcome())
                        .isEqualTo(Decision.Outcome.ALLOWED);
                instances.add(limiter(store, limit, FailureMode.LOCAL, timeout));
            }
            assertThat(instances.get(0).localLimits()).singleElement()
                    .satisfies(l -> assertThat(l.count()).as("round(10 * 0.33)").isEqualTo(3));

            proxy.stall();
            String caller = "thirds-" + UUID.randomUUID();
            long admitted = 0;
            for (RateLimiter instance : instances) {
                for (int i = 0; i < 6; i++) {
                    long started = System.nanoTime();
                    Decision decision = instance.decide(caller);
                    long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                    assertThat(tookMillis).as("a decision, bounded by five times the timeout")
                            .isLessThan(5 * timeout.toMillis());
                    assertThat(decision.outcome()).as("request %d", i + 1)
                            .isEqualTo(i < 3 ? Decision.Outcome.LOCAL_ALLOWED : Decision.Outcome.LOCAL_REJECTED);
                    admitted += decision.allowed() ? 1 : 0;
                }
            }
            assertThat(admitted).as("3 instances x round(10 * 0.33)").isEqualTo(9).isLessThanOrEqualTo(limit.count());
            proxy.release();
        } finally {
            clients.forEach(RedissonClient::shutdown);
            redis.stop();
        }
    }

    /**
     * The measurement: a saturated machine made a fail-open route admit 110 against 50.
     * Here a 1 ms timeout and CPU burner threads (both bounded in time) make some decisions time
     * out while Redis stays healthy; a timed-out script may still have charged Redis, and the
     * request was decided locally as well, so the bound is the limit plus the local admissions,
     * and those are at most each instance's local budget.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aJvmStarvedOfCpuNeverAdmitsMoreThanTheLimitPlusWhatItDecidedLocally() throws Exception {
        Limit limit = Limit.of("starved", 60, Duration.ofHours(1)).withAlgorithm(Algorithm.FIXED_WINDOW);
        List<RedissonClient> clients = new ArrayList<>();
        int burners = 2 * Runtime.getRuntime().availableProcessors();
        ExecutorService pool = Executors.newFixedThreadPool(burners + 4 * INSTANCES);
        try {
            List<RedisStore> stores = new ArrayList<>();
            for (int i = 0; i < INSTANCES; i++) {
                RedissonClient client = TestRedis.shared().newClient();
                clients.add(client);
                stores.add(RedisStore.of(client));
                assertThat(limiter(stores.get(i), limit, FailureMode.CLOSED, Duration.ofSeconds(20)).decide("warm-up")
                        .outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            }
            long localBudget = limiter(stores.get(0), limit, FailureMode.LOCAL, Duration.ofMillis(1)).localLimits()
                    .get(0).count();
            assertThat(localBudget).as("round(60 * 0.33)").isEqualTo(20);

            Map<Decision.Outcome, Long> local = null;
            for (int round = 0; round < 5
                    && (local == null || local.get(Decision.Outcome.LOCAL_ALLOWED) == 0); round++) {
                local = starve(pool, burners, stores, limit, FailureMode.LOCAL);
                long admitted = local.get(Decision.Outcome.ALLOWED) + local.get(Decision.Outcome.LOCAL_ALLOWED);
                System.out.printf("starved, failure-mode local: %s; admitted %d against a limit of %d%n", local,
                        admitted, limit.count());
                assertThat(admitted).as("admitted <= limit + local admissions")
                        .isLessThanOrEqualTo(limit.count() + local.get(Decision.Outcome.LOCAL_ALLOWED));
                assertThat(local.get(Decision.Outcome.ALLOWED)).as("admitted by Redis")
                        .isLessThanOrEqualTo(limit.count());
                assertThat(local.get(Decision.Outcome.LOCAL_ALLOWED))
                        .as("local admissions, at most each instance's budget")
                        .isLessThanOrEqualTo(INSTANCES * localBudget);
                assertThat(local.get(Decision.Outcome.FAILED_OPEN) + local.get(Decision.Outcome.FAILED_CLOSED))
                        .as("no decision failed open or closed").isZero();
            }
            assertThat(local.get(Decision.Outcome.LOCAL_ALLOWED)).as("some decisions timed out and went local")
                    .isPositive();

            // For comparison only (not asserted: how much depends on the machine), the same starvation fails open.
            Map<Decision.Outcome, Long> open = starve(pool, burners, stores, limit, FailureMode.OPEN);
            System.out.printf("starved, failure-mode open: %s; admitted %d against a limit of %d%n", open,
                    open.get(Decision.Outcome.ALLOWED) + open.get(Decision.Outcome.FAILED_OPEN), limit.count());
        } finally {
            pool.shutdownNow();
            clients.forEach(RedissonClient::shutdown);
        }
    }

    /**
     * One caller's requests through {@link #INSTANCES} limiters with a 1 ms timeout, four threads
     * each, 150 requests per thread, while burner threads spin; the outcomes counted.
     */
    private static Map<Decision.Outcome,
            Long> starve(ExecutorService pool, int burners, List<RedisStore> stores, Limit limit,
                                                      FailureMode mode) throws Exception {
        String caller = "starved-" + UUID.randomUUID();
        Map<Decision.Outcome, LongAdder> counts = new EnumMap<>(Decision.Outcome.class);
        for (Decision.Outcome outcome : Decision.Outcome.values()) {
            counts.put(outcome, new LongAdder());
        }
        AtomicBoolean burning = new AtomicBoolean(true);
        long burnUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        List<Future<?>> burnerFutures = new ArrayList<>();
        for (int i = 0; i < burners; i++) {
            burnerFutures.add(pool.submit(() -> {
                long x = 0;
                while (burning.get() && System.nanoTime() < burnUntil) {
                    x += System.nanoTime() % 7; // spin: the CPU the deciding threads need
                }
                return x;
            }));
        }
        List<Future<?>> workers = new ArrayList<>();
        for (RedisStore store : stores) {
            RateLimiter limiter = limiter(store, limit, mode, Duration.ofMillis(1));
            for (int t = 0; t < 4; t++) {
                workers.add(pool.submit(() -> {
                    for (int i = 0; i < 150; i++) {
                        counts.get(limiter.decide(caller).outcome()).increment();
                    }
                    return null;
                }));
            }
        }
        try {
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
        } finally {
            burning.set(false);
            for (Future<?> burner : burnerFutures) {
                burner.get(30, TimeUnit.SECONDS);
            }
        }
        Map<Decision.Outcome, Long> result = new EnumMap<>(Decision.Outcome.class);
        counts.forEach((outcome, count) -> result.put(outcome, count.sum()));
        return result;
    }
}
