package dev.sluice.gateway;

import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A started gateway whose Redis does not answer (nothing listens on its port): the route's
 * failure mode decides. {@code open} (the default) lets the request through without rate-limit
 * headers; {@code closed} (route 'closed') refuses it with {@code Retry-After}, and the backend
 * never sees it. Start-up does not wait for the store.
 */
class GatewayFailureModeTest {

    private static Backend backend;
    private static ConfigurableApplicationContext gateway;

    @BeforeAll
    static void start() {
        backend = Backend.start();
        gateway = GatewayApp.start("backend.uri=" + backend.uri(),
                "sluice.gateway.store=redis://127.0.0.1:" + TestRedis.freePort(), "sluice.gateway.timeout=50ms");
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        backend.close();
    }

    @Test
    void openLetsRequestsThroughWithoutRateLimitHeaders() {
        // more requests than the limit (2/1h): none is refused while the store cannot count
        for (int i = 0; i < 4; i++) {
            HttpResponse<String> response = GatewayApp.get(gateway, "/defaults/o", "erin");
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.body()).isEqualTo("backend /defaults/o");
            assertThat(response.headers().map().keySet()).noneMatch(h -> h.toLowerCase().startsWith("ratelimit"));
        }
    }

    @Test
    void closedRefusesWithRetryAfterAndNeverReachesTheBackend() {
        int reached = backend.requests();
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> response = GatewayApp.get(gateway, "/closed/c", "frank");
            assertThat(response.statusCode()).isEqualTo(429);
            assertThat(Long.parseLong(response.headers().firstValue("Retry-After").orElseThrow())).isPositive();
            assertThat(response.headers().map().keySet()).noneMatch(h -> h.toLowerCase().startsWith("ratelimit"));
        }
        assertThat(backend.requests()).as("requests that reached the backend").isEqualTo(reached);
    }
}
