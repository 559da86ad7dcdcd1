package dev.sluice.spring.boot;

import dev.sluice.spring.boot.demo.DemoApplication;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.redisson.api.RedissonClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo application on a Redis store of its own (sluice.store in the environment): limits are
 * kept in Redis, and the health contributor {@code sluice} follows Redis: once it is stopped, it says
 * so, and stays UP, since every route of the demo fails open (StoreOutageHealthTest has the others).
 */
@SpringBootTest(classes = DemoApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StarterRedisTest {

    private static final TestRedis REDIS = TestRedis.start();

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry properties) {
        properties.add("sluice.store", REDIS::url);
        // The default 100 ms is a production figure: on a busy 2-core machine a decision can take
        // longer and fail open, and the test would read a 200 where the store refused.
        properties.add("sluice.timeout", () -> "2s");
    }

    @AfterAll
    static void stopRedis() {
        REDIS.stop();
    }

    @Test
    @Order(1)
    void limitsFromApplicationYmlAndAnnotationsAreKeptInRedis() {
        Http http = new Http(port);
        assertThat(http.get("/search").statusCode()).isEqualTo(200);
        assertThat(http.get("/search").statusCode()).isEqualTo(200);
        HttpResponse<String> rejected = http.get("/search");
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
        assertThat(http.get("/orders/7").statusCode()).isEqualTo(200);
        assertThat(http.get("/orders/7").statusCode()).isEqualTo(200);
        assertThat(http.get("/orders/7").statusCode()).isEqualTo(429);
        RedissonClient client = REDIS.newClient();
        try {
            assertThat(TestRedis.sluiceKeys(client)).as("Sluice's keys in Redis").isNotEmpty();
        } finally {
            client.shutdown();
        }
    }

    @Test
    @Order(2)
    void healthIsUpWhileRedisAnswers() {
        HttpResponse<String> health = new Http(port).get("/actuator/health/sluice");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"").contains(REDIS.url());
    }

    @Test
    @Order(3)
    void healthReportsTheOutageButStaysUpWhileEveryRouteFailsOpen() {
        REDIS.stop();
        HttpResponse<String> health = new Http(port).get("/actuator/health/sluice");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"UP\"").contains("PING failed").contains("failing open");
        // failure-mode=open (the default): the application still answers, unlimited.
        assertThat(new Http(port).get("/orders").statusCode()).isEqualTo(200);
    }
}
