package dev.sluice.gateway;

import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three started gateways on one Redis ({@code sluice.gateway.store}): the budget is the store's,
 * shared by every instance, so concurrent requests spread over the three are admitted exactly up
 * to the limit.
 */
class GatewayRedisTest {

    private static final int INSTANCES = 3;

    private static Backend backend;
    private static final List<ConfigurableApplicationContext> GATEWAYS = new ArrayList<>();

    @BeforeAll
    static void start() {
        backend = Backend.start();
        for (int i = 0; i < INSTANCES; i++) {
            GATEWAYS.add(GatewayApp.start("backend.uri=" + backend.uri(),
                    "sluice.gateway.store=" + TestRedis.shared().url(), "sluice.gateway.limit=10/1h",
                    // generous: three gateways and the requests share two busy cores
                    "sluice.gateway.timeout=2s",
                    "sluice.gateway.failure-mode=closed"));
        }
    }

    @AfterAll
    static void stop() {
        GATEWAYS.forEach(ConfigurableApplicationContext::close);
        backend.close();
    }

    @Test
    void refusalOnRedisIs429WithRetryAfterAndTheStateIsInRedis() {
        String client = "redis-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            // round robin: every instance sees the same budget
            HttpResponse<String> admitted = GatewayApp.get(GATEWAYS.get(i), "/limited/r", client);
            assertThat(admitted.statusCode()).isEqualTo(200);
            assertThat(admitted.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(2 - i));
        }
        HttpResponse<String> refused = GatewayApp.get(GATEWAYS.get(0), "/limited/r", client);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 1200L);
        assertThat(refused.headers().firstValue("RateLimit-Remaining")).hasValue("0");
        RedissonClient redis = TestRedis.shared().newClient();
        try {
            assertThat(TestRedis.sluiceKeys(redis)).as("Sluice's keys in Redis").anyMatch(k -> k.contains("limited"));
        } finally {
            redis.shutdown();
        }
    }

    @Test
    void threeGatewaysOnOneRedisAdmitExactlyTheLimitAcrossConcurrentRequests() throws Exception {
        // the route 'defaults': sluice.gateway.limit=10/1h; a fresh client each run (Redis may be shared)
        String client = "burst-" + UUID.randomUUID();
        int requests = 40;
        List<CompletableFuture<HttpResponse<Void>>> sent = new ArrayList<>();
        for (int i = 0; i < requests; i++) {
            int port = GatewayApp.port(GATEWAYS.get(i % INSTANCES));
            sent.add(GatewayApp.client().sendAsync(GatewayApp.request(port, "/defaults/c", client),
                    HttpResponse.BodyHandlers.discarding()));
        }
        int admitted = 0;
        int refused = 0;
        for (CompletableFuture<HttpResponse<Void>> response : sent) {
            int status = response.get(60, TimeUnit.SECONDS).statusCode();
            if (status == 200) {
                admitted++;
            } else if (status == 429) {
                refused++;
            }
        }
        // failure-mode=closed: a request the store did not decide is refused too, so exactly the
        // limit admitted proves the store granted each of them once
        assertThat(admitted).as("admitted across %d gateways", INSTANCES).isEqualTo(10);
        assertThat(refused).isEqualTo(requests - 10);
    }
}
