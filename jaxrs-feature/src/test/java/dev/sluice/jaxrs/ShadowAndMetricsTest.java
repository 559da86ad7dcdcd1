package dev.sluice.jaxrs;

import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sluice.mode=shadow}: nothing is rejected, over-limit requests show remaining 0 and are
 * counted; with Micrometer on the class path the counts reach its global registry and match the
 * requests made over HTTP.
 */
class ShadowAndMetricsTest {

    /** A resource of this test alone, so that its counters start at zero. */
    @Path("/metered")
    public static class Metered {
        @GET
        @RateLimit(limit = "2/1m", policy = "metered-shadow", key = "header:X-Client")
        public String get() {
            return "metered";
        }
    }

    @Test
    void shadowModeCountsWhatItWouldHaveRejected() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Metrics.addRegistry(registry);
        try (JerseyApp app = JerseyApp.start(new ResourceConfig(Metered.class).register(RateLimitFeature.class)
                .property("sluice.mode", "shadow"))) {
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> response = app.get("/metered", "X-Client", "shadow-client");
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.headers().firstValue("RateLimit-Remaining"))
                        .hasValue(i < 2 ? Integer.toString(1 - i) : "0");
                assertThat(response.headers().firstValue("Retry-After")).isEmpty();
            }
            assertThat(count(registry, "allowed")).isEqualTo(2);
            assertThat(count(registry, "shadow_rejected")).isEqualTo(3);
            assertThat(count(registry, "rejected")).isZero();
            assertThat(registry.get("sluice.decision.latency").tag("policy", "metered-shadow").timer().count())
                    .isEqualTo(5);
        } finally {
            Metrics.removeRegistry(registry);
        }
    }

    private static double count(SimpleMeterRegistry registry, String outcome) {
        return registry.get("sluice.decisions").tag("policy", "metered-shadow").tag("outcome", outcome).counter()
                .count();
    }
}
