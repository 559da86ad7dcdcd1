package dev.sluice.spring.boot;

import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The health contributor {@code sluice} when its Redis store goes away: routes that fail open keep
 * the application serving, so the contributor stays UP and says what failed; a route that fails
 * closed (503s) or the opt-in {@code sluice.health.down-when-failing-open} makes it DOWN; and
 * {@code management.health.sluice.enabled=false} switches it off.
 */
class StoreOutageHealthTest {

    @ParameterizedTest(name = "failure-mode={0}, down-when-failing-open={1}")
    @CsvSource({"open, false, 200, UP, failing open: filter 'api'",
            "open, true, 503, DOWN, failing open: filter 'api'",
            "closed, false, 503, DOWN, answering 503: filter 'api'"})
    void aStoreOutageIsDownOnlyWhenRoutesFailClosedOrTheApplicationAsks(String failureMode, boolean down,
                                                                       int status, String state, String detail) {
        TestRedis redis = TestRedis.start();
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(), "sluice.store=" + redis.url(),
                "sluice.filters.api.limit=100/1m", "sluice.filters.api.url-patterns=/api/*",
                "sluice.filters.api.failure-mode=" + failureMode, "sluice.health.down-when-failing-open=" + down,
                "management.endpoints.web.exposure.include=health", "management.endpoint.health.show-details=always")) {
            Http http = new Http(BootApps.port(app));
            assertThat(http.get("/api/200").statusCode()).isEqualTo(200);
            HttpResponse<String> up = http.get("/actuator/health/sluice");
            assertThat(up.statusCode()).isEqualTo(200);
            assertThat(up.body()).contains("\"status\":\"UP\"");

            redis.stop();
            HttpResponse<String> health = http.get("/actuator/health/sluice");
            assertThat(health.statusCode()).as(health.body()).isEqualTo(status);
            assertThat(health.body()).contains("\"status\":\"" + state + "\"").contains("PING failed")
                    .contains(detail);
            // The application's own health follows the contributor.
            assertThat(http.get("/actuator/health").statusCode()).isEqualTo(status);
        } finally {
            redis.stop();
        }
    }

    @Test
    void theContributorCanBeSwitchedOff() {
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(), "sluice.filters.api.limit=100/1m",
                "management.health.sluice.enabled=false", "management.endpoints.web.exposure.include=health",
                "management.endpoint.health.show-details=always")) {
            assertThat(app.getBeansOfType(SharedStoreHealth.class)).isEmpty();
            assertThat(new Http(BootApps.port(app)).get("/actuator/health/sluice").statusCode()).isEqualTo(404);
        }
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(), "sluice.filters.api.limit=100/1m",
                "management.endpoints.web.exposure.include=health", "management.endpoint.health.show-details=always")) {
            assertThat(app.getBeansOfType(SharedStoreHealth.class)).hasSize(1);
            assertThat(new Http(BootApps.port(app)).get("/actuator/health/sluice").statusCode()).isEqualTo(200);
        }
    }
}
