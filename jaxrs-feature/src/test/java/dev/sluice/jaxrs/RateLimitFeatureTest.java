package dev.sluice.jaxrs;

import dev.sluice.testing.TestRedis;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The feature in Jersey on Jetty, over real HTTP, deciding on a real Redis. */
class RateLimitFeatureTest {

    private static JerseyApp app;

    @BeforeAll
    static void start() throws Exception {
        app = JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class, Resources.ClassLimited.class)
                .register(Resources.HeaderAuthentication.class)
                .register(RateLimitFeature.class)
                .property("sluice.store", TestRedis.shared().url())
                .property("sluice.timeout", "2s"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (app != null) {
            app.close();
        }
    }

    private static String client() {
        return UUID.randomUUID().toString();
    }

    private static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
    }

    @Test
    void anUnannotatedMethodIsNotLimited() {
        String me = client();
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> ok = app.get("/m/free", "X-Client", me);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(header(ok, "RateLimit-Limit")).isNull();
        }
    }

    @Test
    void aClassAnnotationAppliesToEachMethodAndAMethodAnnotationReplacesIt() {
        String me = client();
        // Class-level 2/1m, with a budget of its own per method.
        assertThat(header(app.get("/c/a", "X-Client", me), "RateLimit-Limit")).isEqualTo("2");
        assertThat(app.get("/c/a", "X-Client", me).statusCode()).isEqualTo(200);
        assertThat(app.get("/c/a", "X-Client", me).statusCode()).isEqualTo(429);
        // Method-level 4/1m replaces the class's 2/1m.
        for (int i = 1; i <= 4; i++) {
            HttpResponse<String> ok = app.get("/c/b", "X-Client", me);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(header(ok, "RateLimit-Limit")).isEqualTo("4");
        }
        assertThat(app.get("/c/b", "X-Client", me).statusCode()).isEqualTo(429);
    }

    @Test
    void twoLimitsOnOneMethodAreAllOrNothing() {
        String me = client();
        HttpResponse<String> first = app.get("/m/two", "X-Client", me);
        assertThat(first.statusCode()).isEqualTo(200);
        // The binding limit is the one with the least left: the minute limit, 1 of 2.
        assertThat(header(first, "RateLimit-Limit")).isEqualTo("2");
        assertThat(header(first, "RateLimit-Remaining")).isEqualTo("1");
        assertThat(app.get("/m/two", "X-Client", me).statusCode()).isEqualTo(200);
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> rejected = app.get("/m/two", "X-Client", me);
            assertThat(rejected.statusCode()).isEqualTo(429);
            assertThat(rejected.body()).contains("\"policy\":\"two-minute\"");
        }
        // The hourly limit (shared by policy name with /m/hourly) lost 2, not 5: the rejected requests
        // consumed nothing.
        HttpResponse<String> hourly = app.get("/m/hourly", "X-Client", me);
        assertThat(hourly.statusCode()).isEqualTo(200);
        assertThat(header(hourly, "RateLimit-Limit")).isEqualTo("5");
        assertThat(header(hourly, "RateLimit-Remaining")).isEqualTo("2");
    }

    @Test
    void principalKeySeesTheUserOfTheAuthenticationFilter() {
        String alice = "alice-" + client();
        String bob = "bob-" + client();
        assertThat(app.get("/m/user", "X-User", alice).body()).isEqualTo(alice);
        assertThat(app.get("/m/user", "X-User", alice).statusCode()).isEqualTo(200);
        assertThat(app.get("/m/user", "X-User", alice).statusCode()).isEqualTo(429);
        // Same address, another user: had the limit run before authentication, both would share the ip budget.
        HttpResponse<String> other = app.get("/m/user", "X-User", bob);
        assertThat(other.statusCode()).isEqualTo(200);
        assertThat(header(other, "RateLimit-Remaining")).isEqualTo("1");
    }

    @Test
    void anAsyncResourceGetsTheHeadersOnItsResumedResponse() {
        String me = client();
        HttpResponse<String> first = app.get("/m/async", "X-Client", me);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("async");
        assertThat(header(first, "RateLimit-Limit")).isEqualTo("2");
        assertThat(header(first, "RateLimit-Remaining")).isEqualTo("1");
        assertThat(header(app.get("/m/async", "X-Client", me), "RateLimit-Remaining")).isEqualTo("0");
        HttpResponse<String> rejected = app.get("/m/async", "X-Client", me);
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(header(rejected, "Retry-After")).isNotNull();
    }
}
