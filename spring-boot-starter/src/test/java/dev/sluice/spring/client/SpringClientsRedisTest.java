package dev.sluice.spring.client;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two applications' clients sharing one Redis store (each its own limiter and Redis connection,
 * as two instances would be): a RestClient, a RestTemplate and a WebClient together never send
 * the provider more than the one limit allows, and a 429 one of them is answered holds the
 * others back.
 */
class SpringClientsRedisTest {

    private final FakeProvider provider = new FakeProvider();
    private final ExecutorService callers = Executors.newFixedThreadPool(18);
    private final List<RedisStore> stores = new ArrayList<>();
    /** A policy of its own per test: the shared Redis outlives each test. */
    private final String policy = "provider-" + UUID.randomUUID();

    @AfterEach
    void stop() {
        callers.shutdownNow();
        provider.close();
        stores.forEach(RedisStore::close);
    }

    /** A limiter of {@code limit} on its own connection to the shared Redis, counting what it grants. */
    private RateLimiter instance(Limit limit, AtomicInteger granted) {
        RedisStore store = RedisStore.connect(TestRedis.shared().url());
        stores.add(store);
        return RateLimiter.builder().limit(limit).store(store).timeout(Duration.ofSeconds(5))
                .listener((decision, nanos) -> {
                    if (decision.allowed()) {
                        granted.incrementAndGet();
                    }
                }).build();
    }

    /**
     * Six calls at once from each of three instances against five per second (burst five), each
     * waiting at most 400 ms: together, what arrives is what had a permit, never more than the
     * instances' limiters granted, nor than the one limit allows over the time the calls took.
     */
    @Test
    void clientsSharingOneRedisStoreNeverExceedTheLimitTogether() throws Exception {
        Limit limit = Limit.of(policy, 5, Duration.ofSeconds(1)).withBurst(5);
        AtomicInteger granted = new AtomicInteger();
        List<Clients.Caller> instances = new ArrayList<>();
        for (Clients kind : Clients.values()) {
            Permits permits = Permits.of(instance(limit, granted), Duration.ofMillis(400));
            instances.add(kind.limited(permits, "provider", provider.url()));
        }
        List<Future<Integer>> calls = new ArrayList<>();
        long started = System.nanoTime();
        for (int i = 0; i < 6; i++) {
            for (int c = 0; c < instances.size(); c++) {
                Clients.Caller caller = instances.get(c);
                String path = "/shared/" + c + "/" + i;
                calls.add(callers.submit(() -> {
                    try {
                        return caller.call(path);
                    } catch (RuntimeException e) {
                        SpringClientsTest.unavailableIn(e);
                        return -1;
                    }
                }));
            }
        }
        int ok = 0;
        for (Future<Integer> call : calls) {
            int status = call.get(60, TimeUnit.SECONDS);
            assertThat(status).isIn(200, -1);
            ok += status == 200 ? 1 : 0;
        }
        long periods = 1 + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
        int arrived = provider.arrivedUnder("/shared/").size();
        assertThat(arrived).as("the calls that had a permit, and only they, arrived").isEqualTo(ok);
        assertThat(arrived).as("arrived, at most granted by the three instances").isLessThanOrEqualTo(granted.get());
        assertThat((long) arrived).as("at most the burst and five per second begun, all instances together")
                .isLessThanOrEqualTo(5 + 5 * periods);
    }

    /** The RestClient's call is answered 429 with {@code Retry-After: 3}: the other instances' next calls wait. */
    @Test
    void a429OneInstanceIsAnsweredHoldsTheOthersBack() {
        Limit limit = Limit.of(policy, 100, Duration.ofSeconds(1));
        AtomicInteger granted = new AtomicInteger();
        List<Clients.Caller> instances = new ArrayList<>();
        for (Clients kind : Clients.values()) {
            instances.add(kind.limited(Permits.of(instance(limit, granted), Duration.ofMillis(500)), "provider",
                    provider.url()));
        }
        assertThat(instances.get(0).call("/paused/429-3")).isEqualTo(429);
        for (int c = 1; c < instances.size(); c++) {
            Clients.Caller other = instances.get(c);
            String path = "/paused/" + c;
            PermitUnavailableException refused = SpringClientsTest.unavailable(() -> other.call(path));
            assertThat(refused.retryAfter()).isGreaterThan(Duration.ofSeconds(1));
        }
        assertThat(provider.arrivedUnder("/paused/")).containsExactly("/paused/429-3");
    }
}
