package dev.sluice.gateway;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import dev.sluice.memory.MemoryStore;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The auto-configuration at start-up: bad {@code sluice.gateway.*} values stop the application,
 * naming the property and the value; an application's own {@link SluiceRateLimiter} replaces the
 * one of the properties.
 */
class GatewayStartUpTest {

    private static Backend backend;

    @BeforeAll
    static void startBackend() {
        backend = Backend.start();
    }

    @AfterAll
    static void stopBackend() {
        backend.close();
    }

    @Test
    void aBadDefaultLimitStopsStartUpNamingThePropertyAndTheValue() {
        assertThatThrownBy(() -> GatewayApp.start("backend.uri=" + backend.uri(), "sluice.gateway.limit=100/minutes")
                .close())
                .rootCause().hasMessageContaining("'sluice.gateway.limit'").hasMessageContaining("'100/minutes'");
    }

    @Test
    void anUnknownPropertyStopsStartUp() {
        assertThatThrownBy(() -> GatewayApp.start("backend.uri=" + backend.uri(), "sluice.gateway.limt=5/1m").close())
                .rootCause().hasMessageContaining("'sluice.gateway.limt'");
    }

    @Test
    void aStoreOfUnknownSchemeStopsStartUp() {
        assertThatThrownBy(() -> GatewayApp.start("backend.uri=" + backend.uri(), "sluice.gateway.store=mongo://x")
                .close())
                .rootCause().hasMessageContaining("'sluice.gateway.store'").hasMessageContaining("mongo://x");
    }

    @Test
    void anApplicationsOwnLimiterReplacesTheAutoConfiguredOne() {
        ConfigurableApplicationContext gateway = GatewayApp.start(new Class<?>[] {GatewayApp.class, OwnLimiter.class},
                "backend.uri=" + backend.uri());
        try {
            assertThat(gateway.getBeansOfType(SluiceRateLimiter.class)).containsOnlyKeys("sluiceRateLimiter");
            // the application's defaults (1/1h), not sluice.gateway.limit (2/1h)
            HttpResponse<String> admitted = GatewayApp.get(gateway, "/defaults/own", "grace");
            assertThat(admitted.statusCode()).isEqualTo(200);
            assertThat(admitted.headers().firstValue("RateLimit-Limit")).hasValue("1");
            assertThat(GatewayApp.get(gateway, "/defaults/own", "grace").statusCode()).isEqualTo(429);
        } finally {
            gateway.close();
        }
    }

    /** An application's own limiter, under the name the routes refer to. */
    @Configuration(proxyBeanMethods = false)
    static class OwnLimiter {

        @Bean(destroyMethod = "close")
        MemoryStore ownStore() {
            return MemoryStore.create();
        }

        @Bean
        SluiceRateLimiter sluiceRateLimiter(MemoryStore ownStore, ConfigurationService configurationService) {
            return new SluiceRateLimiter(ownStore, new SluiceRateLimiter.Config().setLimit("1/1h"),
                    configurationService);
        }
    }
}
