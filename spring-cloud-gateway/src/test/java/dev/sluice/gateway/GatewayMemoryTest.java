package dev.sluice.gateway;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A started gateway on the in-memory store (the default): the routes of {@code application.yml}
 * answer as Sluice's other adapters do, keyed by the application's own {@code KeyResolver}.
 */
class GatewayMemoryTest {

    private static Backend backend;
    private static ConfigurableApplicationContext gateway;

    @BeforeAll
    static void start() {
        backend = Backend.start();
        gateway = GatewayApp.start("backend.uri=" + backend.uri());
    }

    @AfterAll
    static void stop() {
        if (gateway != null) {
            gateway.close();
        }
        backend.close();
    }

    @Test
    void refusalIs429WithRetryAfterAndTheHeadersAndNeverReachesTheBackend() {
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> admitted = GatewayApp.get(gateway, "/limited/a", "alice");
            assertThat(admitted.statusCode()).isEqualTo(200);
            assertThat(admitted.body()).isEqualTo("backend /limited/a");
            // the binding limit is 3/1h, the one with the least remaining
            assertThat(admitted.headers().firstValue("RateLimit-Limit")).hasValue("3");
            assertThat(admitted.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(3 - i));
            assertThat(admitted.headers().firstValue("RateLimit-Reset")).isPresent();
            assertThat(admitted.headers().firstValue("Retry-After")).isEmpty();
        }
        int reached = backend.requests();
        HttpResponse<String> refused = GatewayApp.get(gateway, "/limited/a", "alice");
        assertThat(refused.statusCode()).isEqualTo(429);
        long retryAfter = Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
        // a token of 3/1h comes every 1200 s
        assertThat(retryAfter).isBetween(1L, 1200L);
        assertThat(refused.headers().firstValue("RateLimit-Limit")).hasValue("3");
        assertThat(refused.headers().firstValue("RateLimit-Remaining")).hasValue("0");
        assertThat(refused.headers().firstValue("RateLimit-Reset")).hasValue(Long.toString(retryAfter));
        assertThat(backend.requests()).as("requests that reached the backend").isEqualTo(reached);

        // the key resolver's key: another client has its own budget
        assertThat(GatewayApp.get(gateway, "/limited/a", "bob").statusCode()).isEqualTo(200);
    }

    @Test
    void aRouteWithoutArgumentsTakesTheDefaultsAndCountsOnItsOwn() {
        // sluice.gateway.limit=2/1h
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> admitted = GatewayApp.get(gateway, "/defaults/x", "carol");
            assertThat(admitted.statusCode()).isEqualTo(200);
            assertThat(admitted.headers().firstValue("RateLimit-Limit")).hasValue("2");
        }
        assertThat(GatewayApp.get(gateway, "/defaults/x", "carol").statusCode()).isEqualTo(429);
        // the route 'closed' has the same default limit but a policy of its own: carol's budget there is whole
        assertThat(GatewayApp.get(gateway, "/closed/x", "carol").headers().firstValue("RateLimit-Remaining"))
                .hasValue("1");
    }

    @Test
    void draftHeadersAndAnotherAlgorithmFromTheRoutesArguments() {
        HttpResponse<String> admitted = GatewayApp.get(gateway, "/draft/y", "dave");
        assertThat(admitted.statusCode()).isEqualTo(200);
        assertThat(admitted.headers().firstValue("RateLimit-Policy")).hasValue("\"draft\";q=2;w=3600");
        assertThat(admitted.headers().firstValue("RateLimit").orElseThrow()).startsWith("\"draft\";r=1;t=");
        assertThat(admitted.headers().firstValue("RateLimit-Limit")).isEmpty();
        assertThat(GatewayApp.get(gateway, "/draft/y", "dave").statusCode()).isEqualTo(200);
        HttpResponse<String> refused = GatewayApp.get(gateway, "/draft/y", "dave");
        assertThat(refused.statusCode()).isEqualTo(429);
        String retryAfter = refused.headers().firstValue("Retry-After").orElseThrow();
        assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"draft\";r=0;t=" + retryAfter);
    }

    @Test
    void aRequestWithoutKeyIsDeniedByTheFilterAsBefore() {
        // the gateway's own deny-empty-key (403): Sluice is not asked for a request with no caller
        HttpResponse<String> response = GatewayApp.get(gateway, "/limited/a", null);
        assertThat(response.statusCode()).isEqualTo(403);
    }
}
