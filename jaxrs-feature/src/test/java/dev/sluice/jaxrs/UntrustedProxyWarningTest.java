package dev.sluice.jaxrs;

import dev.sluice.testing.LogCapture;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Behind a load balancer (here: the test client on loopback) without {@code sluice.trusted-proxies},
 * every client shares the balancer's budget: the feature logs it once, for all its resource
 * methods, and decides as before.
 */
class UntrustedProxyWarningTest {

    @Path("lb")
    public static class Balanced {
        @GET
        @Path("a")
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(limit = "2/1h")
        public String a() {
            return "a";
        }

        @GET
        @Path("b")
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(limit = "2/1h")
        public String b() {
            return "b";
        }
    }

    @Test
    void aForwardingHeaderFromAnUntrustedLoopbackPeerIsLoggedOncePerFeatureAndIgnored() throws Exception {
        String log;
        try (LogCapture capture = LogCapture.start();
             JerseyApp app = JerseyApp.start(new ResourceConfig(Balanced.class).register(RateLimitFeature.class))) {
            for (String path : new String[] {"/lb/a", "/lb/b"}) {
                // Two clients behind the balancer: one budget of 2, as before the warning existed.
                assertThat(app.get(path, "X-Forwarded-For", "198.51.100.1").statusCode()).isEqualTo(200);
                assertThat(app.get(path, "X-Forwarded-For", "198.51.100.2").statusCode()).isEqualTo(200);
                assertThat(app.get(path, "Forwarded", "for=198.51.100.3").statusCode()).isEqualTo(429);
            }
            log = capture.text();
        }
        assertThat(log.split("is not in 'trusted-proxies'", -1)).as(log).hasSize(2);
        assertThat(log).contains("WARN dev.sluice.web.internal.CallerResolver")
                .contains(": a request from 127.0.0.1 carries X-Forwarded-For")
                .contains("'sluice.trusted-proxies'");
    }
}
