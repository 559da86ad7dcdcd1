package dev.sluice.jaxrs;

import dev.sluice.Limit;
import dev.sluice.memory.MemoryStore;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's own caller resolution and choice of limits, given to the feature in Java, over
 * real HTTP in Jersey.
 */
class ApplicationHooksTest {

    @Path("/hooks")
    public static class Hooked {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "hooks", limit = "1/1m")
        public String get() {
            return "ok";
        }
    }

    private static final List<Limit> GOLD = List.of(Limit.of("hooks.gold", "3/1m"));

    @Test
    void theFeatureAsksTheApplicationsKeyResolverAndLimitResolver() throws Exception {
        RateLimitFeature feature = new RateLimitFeature(MemoryStore.create())
                .withKeyResolver(request -> request.header("X-Account"))
                .withLimitResolver(request -> "gold".equals(request.header("X-Plan")) ? GOLD : null);
        try (JerseyApp app = JerseyApp.start(new ResourceConfig(Hooked.class).register(feature))) {
            // One address, two accounts: two callers.
            assertThat(app.get("/hooks", "X-Account", "alice").statusCode()).isEqualTo(200);
            assertThat(app.get("/hooks", "X-Account", "bob").statusCode()).isEqualTo(200);
            assertThat(app.get("/hooks", "X-Account", "alice").statusCode()).isEqualTo(429);
            // A gold plan: its own limits, under its own policy.
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> gold = app.get("/hooks", "X-Account", "carol", "X-Plan", "gold");
                assertThat(gold.statusCode()).isEqualTo(200);
                assertThat(gold.headers().firstValue("RateLimit-Limit")).hasValue("3");
            }
            assertThat(app.get("/hooks", "X-Account", "carol", "X-Plan", "gold").statusCode()).isEqualTo(429);
        }
    }

    @Path("/metered")
    public static class Metered {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "own-registry", limit = "1/1m")
        public String get() {
            return "ok";
        }
    }

    @Test
    void metricsGoToTheRegistryTheApplicationGivesNotTheGlobalOne() throws Exception {
        SimpleMeterRegistry own = new SimpleMeterRegistry();
        ResourceConfig config = new ResourceConfig(Metered.class).register(RateLimitFeature.class)
                .property(RateLimitFeature.METER_REGISTRY, own);
        try (JerseyApp app = JerseyApp.start(config)) {
            assertThat(app.get("/metered").statusCode()).isEqualTo(200);
            assertThat(app.get("/metered").statusCode()).isEqualTo(429);
        }
        assertThat(own.get("sluice.decisions").tag("policy", "own-registry").tag("outcome", "allowed").counter()
                .count())
                .isEqualTo(1);
        assertThat(own.get("sluice.decisions").tag("policy", "own-registry").tag("outcome", "rejected").counter()
                .count())
                .isEqualTo(1);
        assertThat(Metrics.globalRegistry.find("sluice.decisions").tag("policy", "own-registry").meters()).isEmpty();
    }
}
