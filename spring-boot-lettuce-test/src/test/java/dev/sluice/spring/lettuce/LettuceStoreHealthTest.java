package dev.sluice.spring.lettuce;

import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import redis.embedded.RedisServer;

import java.net.http.HttpResponse;

import static dev.sluice.spring.lettuce.LocalRedisAndHttp.get;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The health contributor {@code sluice} of an application on Spring Data Redis's Lettuce factory,
 * without Redisson: the store on the factory is in it, and when its Redis goes away the circuit
 * that opens is reported, the application still serving (the route fails open, so the contributor
 * stays UP and names the route failing open).
 */
class LettuceStoreHealthTest {

    /** Requests while Redis is stopped, at most: the circuit opens after five failures in a row. */
    private static final int MAX_REQUESTS = 30;

    @Test
    void aStoreOnTheFactoryIsInTheHealthAndItsOpenCircuitIsReported() throws Exception {
        int redisPort = LocalRedisAndHttp.freePort();
        // A Redis of its own, whatever REDIS_URL says: this test stops it.
        RedisServer redis = LocalRedisAndHttp.startRedis(redisPort);
        String store = "redis://127.0.0.1:1"; // only the factory's client reaches Redis
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(LettuceFactoryReuseTest.App.class)
                .web(WebApplicationType.SERVLET).run(
                        "--server.address=127.0.0.1", "--server.port=0",
                        "--spring.data.redis.host=127.0.0.1", "--spring.data.redis.port=" + redisPort,
                        "--sluice.store=" + store, "--sluice.timeout=200ms",
                        "--sluice.filters.api.limit=1000/1m", "--sluice.filters.api.url-patterns=/api/*",
                        "--management.endpoints.web.exposure.include=health",
                        "--management.endpoint.health.show-details=always")) {
            int port = ((WebServerApplicationContext) app).getWebServer().getPort();
            assertThat(get(port, "/api/hello").statusCode()).isEqualTo(200);
            HttpResponse<String> healthy = get(port, "/actuator/health/sluice");
            assertThat(healthy.statusCode()).as(healthy.body()).isEqualTo(200);
            assertThat(healthy.body()).contains("\"status\":\"UP\"").contains("\"" + store + "\":\"UP\"");

            redis.stop();
            String health = "";
            for (int i = 0; i < MAX_REQUESTS && !health.contains("circuit open"); i++) {
                assertThat(get(port, "/api/hello").statusCode()).as("the route fails open").isEqualTo(200);
                health = get(port, "/actuator/health/sluice").body();
            }
            assertThat(health).as("the contributor after %d requests with Redis stopped", MAX_REQUESTS)
                    .contains("\"status\":\"UP\"")
                    .contains("circuit open: filter 'api'; failing open: filter 'api'");
        } finally {
            redis.stop();
        }
    }
}
