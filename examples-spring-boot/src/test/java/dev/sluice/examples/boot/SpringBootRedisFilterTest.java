package dev.sluice.examples.boot;

import dev.sluice.testing.Resp;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The same application with {@code sluice.store} pointing both filters at a real Redis (the
 * embedded redis-server of core's tests): the same answers over HTTP, and the budgets live in Redis.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        // A generous timeout: on a loaded test machine a late answer would fail open, without headers.
        // A key lives until its budget is full again: six requests of 300 a minute refill in 1.2 s, so
        // a paused JVM found the per-address key gone; 300 an hour keeps it 72 s, stored the same way.
        properties = {"server.address=127.0.0.1", "sluice.timeout=5s", "sluice.filters.search-per-ip.limit=300/1h"})
class SpringBootRedisFilterTest {

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("sluice.store", () -> TestRedis.shared().url());
    }

    @LocalServerPort
    int port;

    @Test
    void twoHundredsThenTooManyRequestsWithTheBudgetsInRedis() throws Exception {
        String apiKey = "boot-" + UUID.randomUUID();
        SpringBootFilterTest.fiveThenRejected(port, apiKey);
        TestRedis redis = TestRedis.shared();
        assertThat((List<?>) Resp.call(redis.port(), "KEYS", "sluice:{key~" + apiKey + "}:search:*"))
                .as("the per-key budget in Redis").isNotEmpty();
        assertThat((List<?>) Resp.call(redis.port(), "KEYS", "sluice:{ip~127.0.0.1}:search-per-ip:*"))
                .as("the per-address budget, from the second filter on the same store").isNotEmpty();
    }
}
