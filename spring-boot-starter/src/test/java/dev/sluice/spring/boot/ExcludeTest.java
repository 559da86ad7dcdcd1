package dev.sluice.spring.boot;

import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code exclude}: paths a filter leaves alone; and a filter mapped to {@code /*} leaves the
 * Actuator's base path alone unless a filter is mapped to it on purpose.
 */
class ExcludeTest {

    @Test
    void excludedPathsAndTheActuatorPassAFilterMappedToEverything() {
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(),
                "sluice.filters.all.limit=1/1m", "sluice.filters.all.exclude=/public/*,*.css",
                "sluice.filters.all.policy=exclude-" + System.nanoTime(),
                "management.endpoints.web.exposure.include=health")) {
            Http http = new Http(BootApps.port(app));
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> health = http.get("/actuator/health");
                assertThat(health.statusCode()).as("health check %d", i).isEqualTo(200);
                assertThat(health.headers().firstValue("RateLimit-Limit")).isEmpty();
                assertThat(http.get("/public/a").statusCode()).isEqualTo(200);
                assertThat(http.get("/public/site.css").statusCode()).isEqualTo(200);
            }
            HttpResponse<String> first = http.get("/api/200");
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.headers().firstValue("RateLimit-Limit")).hasValue("1");
            assertThat(http.get("/api/200").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aMovedActuatorIsLeftAloneAndAFilterMappedToItLimitsIt() {
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(),
                "sluice.filters.all.limit=1/1m", "sluice.filters.ops.limit=1/1m",
                "sluice.filters.all.policy=all-" + System.nanoTime(),
                "sluice.filters.ops.policy=ops-" + System.nanoTime(),
                "sluice.filters.ops.url-patterns=/manage/*",
                "management.endpoints.web.base-path=/manage", "management.endpoints.web.exposure.include=health")) {
            Http http = new Http(BootApps.port(app));
            HttpResponse<String> first = http.get("/manage/health");
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(first.headers().firstValue("RateLimit-Limit")).hasValue("1");
            assertThat(http.get("/manage/health").statusCode()).isEqualTo(429);
            // 'all' leaves the moved Actuator alone, and limits the rest.
            assertThat(http.get("/api/200").statusCode()).isEqualTo(200);
            assertThat(http.get("/api/200").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aPatternThatIsNoPathStopsStartUpNamingTheProperty() {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filters.api.limit=1/1m",
                "sluice.filters.api.exclude=public");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.filters.api.exclude' takes path patterns")
                .contains("got 'public'");
    }
}
