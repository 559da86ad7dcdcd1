package dev.sluice.spring.lettuce;

import dev.sluice.redis.LettuceStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.internal.StoreRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import redis.embedded.RedisServer;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A Spring Boot application with Spring Data Redis on Lettuce and no Redisson on its class path,
 * on servlets and on WebFlux: the starter decides on the application's own
 * {@code LettuceConnectionFactory}. The store value names a port nothing listens on, and the
 * filter fails closed: only the factory's client, pointed at the real Redis by
 * {@code spring.data.redis.*}, can have admitted anything. Over real HTTP, exactly the limit is
 * admitted, and the state is in that Redis.
 */
class LettuceFactoryReuseTest {

    private static final int LIMIT = 5;

    private static RedisServer server;
    private static String host;
    private static int port;

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @RestController
    static class App {
        @GetMapping("/api/hello")
        String hello() {
            return "hello\n";
        }
    }

    @BeforeAll
    static void redis() throws IOException {
        String url = System.getenv("REDIS_URL");
        if (url != null && !url.isBlank()) {
            URI uri = URI.create(url.trim());
            host = uri.getHost();
            port = uri.getPort() < 0 ? 6379 : uri.getPort();
            return;
        }
        port = LocalRedisAndHttp.freePort();
        host = "127.0.0.1";
        server = LocalRedisAndHttp.startRedis(port);
    }

    @AfterAll
    static void stop() throws IOException {
        if (server != null) {
            server.stop();
        }
    }

    @Test
    void redissonIsNotOnTheClassPath() {
        assertThatThrownBy(() -> Class.forName("org.redisson.api.RedissonClient"))
                .isInstanceOf(ClassNotFoundException.class);
    }

    @Test
    void theApplicationsLettuceFactoryAdmitsExactlyTheLimit() throws Exception {
        admitsExactlyTheLimitOnTheFactory(WebApplicationType.SERVLET);
    }

    @Test
    void aWebFluxApplicationsLettuceFactoryAdmitsExactlyTheLimit() throws Exception {
        admitsExactlyTheLimitOnTheFactory(WebApplicationType.REACTIVE);
    }

    private static void admitsExactlyTheLimitOnTheFactory(WebApplicationType type) throws Exception {
        String policy = "lettuce-factory-" + System.nanoTime();
        String store = "redis://127.0.0.1:1"; // nothing listens: only the factory's client reaches Redis
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).web(type).run(
                "--server.address=127.0.0.1", "--server.port=0",
                "--spring.data.redis.host=" + host, "--spring.data.redis.port=" + port,
                "--sluice.store=" + store, "--sluice.failure-mode=closed", "--sluice.timeout=5s",
                "--sluice.filters.api.limit=" + LIMIT + "/1h", "--sluice.filters.api.url-patterns=/api/*",
                "--sluice.filters.api.policy=" + policy)) {
            RedisConnectionFactory factory = app.getBean(RedisConnectionFactory.class);
            assertThat(factory).isInstanceOf(LettuceConnectionFactory.class);

            RateLimitStore used = StoreRegistry.application().acquire(store);
            try {
                assertThat(used).as("the store of '%s'", store).isInstanceOf(LettuceStore.class);
            } finally {
                StoreRegistry.application().release(store);
            }

            int port = ((WebServerApplicationContext) app).getWebServer().getPort();
            List<Integer> statuses = new ArrayList<>();
            for (int i = 0; i < 3 * LIMIT; i++) {
                statuses.add(LocalRedisAndHttp.get(port, "/api/hello").statusCode());
            }
            assertThat(statuses.stream().filter(s -> s == 200).count()).as("%s: admitted of %s", type, statuses)
                    .isEqualTo(LIMIT);
            assertThat(statuses.stream().filter(s -> s == 429).count()).as("refused of %s", statuses)
                    .isEqualTo(2L * LIMIT);

            Set<String> keys = app.getBean(StringRedisTemplate.class).keys("sluice:*" + policy + "*");
            assertThat(keys).as("Sluice's keys of the policy, read through the application's factory").isNotEmpty();
        }
    }
}
