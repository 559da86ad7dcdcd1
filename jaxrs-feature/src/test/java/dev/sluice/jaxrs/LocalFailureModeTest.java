package dev.sluice.jaxrs;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RateLimit(failureMode = FailureMode.LOCAL)} with {@code sluice.local-share}, over HTTP in
 * Jersey: while the store fails, the method is limited by its scaled local budget, answered with
 * that budget's headers, and counted as {@code local_allowed} and {@code local_rejected}. The store
 * is a fault injection that always fails (Redis stalled and killed: the servlet filter's
 * {@code LocalFailureModeTest}).
 */
class LocalFailureModeTest {

    /** A resource of this test alone, so that its counters start at zero. */
    @Path("/local")
    public static class Local {
        @GET
        @RateLimit(limit = "4/1h", policy = "jaxrs-local", key = "header:X-Client", failureMode = FailureMode.LOCAL)
        public String get() {
            return "local";
        }
    }

    /** A store that always fails, as Redis does while it is down. */
    private static final class Down implements RateLimitStore {
        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return CompletableFuture.failedFuture(new IllegalStateException("connection refused"));
        }

        @Override
        public void close() {
        }
    }

    @Test
    void aLocalMethodIsLimitedByItsShareWhileTheStoreFails() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Metrics.addRegistry(registry);
        try (JerseyApp app = JerseyApp.start(new ResourceConfig(Local.class).register(new RateLimitFeature(new Down()))
                .property("sluice.local-share", "0.5"))) {
            for (int i = 0; i < 2; i++) {
                HttpResponse<String> response = app.get("/local", "X-Client", "c");
                assertThat(response.statusCode()).as("local request %d", i + 1).isEqualTo(200);
                assertThat(response.headers().firstValue("RateLimit-Limit")).as("4 * 0.5").hasValue("2");
                assertThat(response.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(1 - i));
            }
            HttpResponse<String> refused = app.get("/local", "X-Client", "c");
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.headers().firstValue("Retry-After")).isPresent();
            assertThat(refused.headers().firstValue("RateLimit-Remaining")).hasValue("0");
            assertThat(count(registry, "local_allowed")).isEqualTo(2);
            assertThat(count(registry, "local_rejected")).isEqualTo(1);
            assertThat(count(registry, "failed_open")).isZero();
        } finally {
            Metrics.removeRegistry(registry);
        }
    }

    private static double count(SimpleMeterRegistry registry, String outcome) {
        return registry.get("sluice.decisions").tag("policy", "jaxrs-local").tag("outcome", outcome).counter().count();
    }
}
