package dev.sluice.spring.boot;

import dev.sluice.Limit;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's {@code KeyResolver} and {@code LimitResolver} beans, named by the properties:
 * per filter ({@code sluice.filters.<name>.key-resolver}) and for every {@code @RateLimit} handler
 * ({@code sluice.key-resolver}).
 */
class ResolverBeansTest {

    @Configuration(proxyBeanMethods = false)
    static class Resolvers {
        @Bean
        KeyResolver tenant() {
            return request -> request.header("X-Tenant");
        }

        @Bean
        LimitResolver plans() {
            List<Limit> gold = List.of(Limit.of("plans.gold", "3/1m"));
            return request -> "gold".equals(request.header("X-Plan")) ? gold : null;
        }
    }

    private static final Class<?>[] APP = {BootApps.App.class, Resolvers.class};

    @Test
    void aFilterAndTheHandlersAskTheResolverBeansTheyName() throws Exception {
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(), APP,
                "sluice.filters.tenants.limit=1/1m", "sluice.filters.tenants.url-patterns=/api/*",
                "sluice.filters.tenants.key-resolver=tenant",
                "sluice.filters.tenants.policy=tenants-" + System.nanoTime(),
                "sluice.filters.plans.limit=1/1m", "sluice.filters.plans.url-patterns=/plans",
                "sluice.filters.plans.limit-resolver=plans", "sluice.filters.plans.policy=plans-" + System.nanoTime(),
                "sluice.key-resolver=tenant")) {
            int port = BootApps.port(app);
            // One client address, two tenants: two budgets.
            assertThat(get(port, "/api/200", "X-Tenant", "a")).isEqualTo(200);
            assertThat(get(port, "/api/200", "X-Tenant", "a")).isEqualTo(429);
            assertThat(get(port, "/api/200", "X-Tenant", "b")).isEqualTo(200);
            // @RateLimit(limit = "1/1m"), keyed by sluice.key-resolver.
            assertThat(get(port, "/limited", "X-Tenant", "a")).isEqualTo(200);
            assertThat(get(port, "/limited", "X-Tenant", "a")).isEqualTo(429);
            assertThat(get(port, "/limited", "X-Tenant", "b")).isEqualTo(200);
            // The gold plan's 3/1m, else the filter's own 1/1m.
            for (int i = 0; i < 3; i++) {
                assertThat(get(port, "/plans", "X-Plan", "gold")).as("gold request %d", i).isEqualTo(200);
            }
            assertThat(get(port, "/plans", "X-Plan", "gold")).isEqualTo(429);
            assertThat(get(port, "/plans", "X-Plan", "basic")).isEqualTo(200);
            assertThat(get(port, "/plans", "X-Plan", "basic")).isEqualTo(429);
        }
    }

    @Test
    void aNameThatIsNoSuchBeanStopsStartUpNamingTheProperty() {
        Throwable thrown = BootApps.failure(Map.of(), APP, "sluice.filters.api.limit=1/1m",
                "sluice.filters.api.key-resolver=tenantz");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.filters.api.key-resolver' names no bean")
                .contains("got 'tenantz'").contains("[tenant]");
    }

    private static int get(int port, String path, String header, String value) throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header(header, value).GET().build();
        return client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }
}
