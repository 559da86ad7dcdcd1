package dev.sluice.spring.boot;

import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.TestRedis;
import dev.sluice.web.internal.StoreRegistry;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's {@code RedissonClient} bean serves Sluice's Redis store: no client of Sluice's
 * own, limits kept in Redis through it, and the client left running when the application closes
 * (here the bean has no destroy method, so only Sluice could have shut it down).
 */
class RedissonClientBeanTest {

    private static RedissonClient client;

    @Configuration(proxyBeanMethods = false)
    static class ApplicationsClient {
        @Bean(destroyMethod = "")
        RedissonClient redisson() {
            return client;
        }
    }

    @Test
    void theApplicationsClientIsUsedAndNotShutDown() {
        TestRedis redis = TestRedis.start();
        client = redis.newClient();
        try {
            try (ConfigurableApplicationContext app = BootApps.start(Map.of(),
                    new Class<?>[] {BootApps.App.class, ApplicationsClient.class}, "sluice.store=" + redis.url(),
                    "sluice.filters.api.limit=1/1m", "sluice.filters.api.url-patterns=/api/*",
                    "sluice.filters.api.policy=bean-client-" + System.nanoTime())) {
                RateLimitStore store = StoreRegistry.application().acquire(redis.url());
                try {
                    assertThat(store).isInstanceOf(RedisStore.class);
                    assertThat(((RedisStore) store).client()).as("the store's client").isSameAs(client);
                } finally {
                    StoreRegistry.application().release(redis.url());
                }
                Http http = new Http(BootApps.port(app));
                assertThat(http.get("/api/200").statusCode()).isEqualTo(200);
                assertThat(http.get("/api/200").statusCode()).isEqualTo(429);
                assertThat(TestRedis.sluiceKeys(client)).as("Sluice's keys, through the bean").isNotEmpty();
            }
            assertThat(client.isShutdown()).as("closed by Sluice").isFalse();
            assertThat(client.getKeys().count()).as("the client still works").isNotNegative();
        } finally {
            client.shutdown();
            redis.stop();
        }
    }
}
