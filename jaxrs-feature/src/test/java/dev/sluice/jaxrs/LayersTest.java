package dev.sluice.jaxrs;

import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A servlet filter in front of a rate-limited resource method, in one application: the response
 * reports both layers, and the legacy headers the binding limit of the two.
 */
class LayersTest {

    private static JerseyApp app;
    private static JerseyApp draftApp;

    @BeforeAll
    static void start() throws Exception {
        app = JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class)
                        .register(RateLimitFeature.class)
                        .property("sluice.headers", "both"),
                Map.of("policy", "front", "limit", "100/1m", "algorithm", "fixed-window", "key", "header:X-Client",
                        "headers", "both"));
        draftApp = JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class)
                .register(RateLimitFeature.class)
                .property("sluice.headers", "draft-10"));
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            app.close();
        }
        if (draftApp != null) {
            draftApp.close();
        }
    }

    private static String header(HttpResponse<?> response, String name) {
        return String.join(", ", response.headers().allValues(name));
    }

    @Test
    void theFilterAndTheResourceMethodAreBothListed() {
        String me = UUID.randomUUID().toString();
        HttpResponse<String> first = app.get("/m/three", "X-Client", me);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(header(first, "RateLimit-Policy"))
                .isEqualTo("\"front\";q=100;w=60, \"MethodLimited.three~460f24d5\";q=3;w=60");
        assertThat(header(first, "RateLimit"))
                .matches("\"front\";r=99;t=\\d+, \"MethodLimited.three~460f24d5\";r=2;t=20");
        assertThat(header(first, "RateLimit-Limit")).isEqualTo("3");
        assertThat(header(first, "RateLimit-Remaining")).isEqualTo("2");
        assertThat(header(first, "RateLimit-Reset")).isEqualTo("20");

        app.get("/m/three", "X-Client", me);
        app.get("/m/three", "X-Client", me);
        HttpResponse<String> refused = app.get("/m/three", "X-Client", me);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(header(refused, "RateLimit"))
                .matches("\"front\";r=96;t=\\d+, \"MethodLimited.three~460f24d5\";r=0;t=20");
        assertThat(header(refused, "Retry-After")).isEqualTo("20");
        assertThat(header(refused, "RateLimit-Limit")).isEqualTo("3");
        assertThat(header(refused, "RateLimit-Remaining")).isEqualTo("0");
        // headers=both keeps the about:blank body
        assertThat(refused.body()).contains("\"type\":\"about:blank\"");

        // an unannotated method: only the filter's layer
        HttpResponse<String> free = app.get("/m/free", "X-Client", me);
        assertThat(header(free, "RateLimit")).matches("\"front\";r=95;t=\\d+");
        assertThat(header(free, "RateLimit-Limit")).isEqualTo("100");
    }

    @Test
    void draftRejectionsUseTheQuotaExceededProblemType() {
        String me = UUID.randomUUID().toString();
        for (int i = 0; i < 3; i++) {
            assertThat(draftApp.get("/m/three", "X-Client", me).statusCode()).isEqualTo(200);
        }
        HttpResponse<String> refused = draftApp.get("/m/three", "X-Client", me);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.body())
                .contains("\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\"")
                .contains("\"title\":\"Quota Exceeded\"")
                .contains("\"violated-policies\":[\"MethodLimited.three~460f24d5\"]");
        assertThat(header(refused, "RateLimit"))
                .isEqualTo("\"MethodLimited.three~460f24d5\";r=0;t=" + header(refused, "Retry-After"));
    }
}
