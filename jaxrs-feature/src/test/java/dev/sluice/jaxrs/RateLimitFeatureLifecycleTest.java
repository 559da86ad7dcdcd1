package dev.sluice.jaxrs;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.TestRedis;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/** Start-up, shutdown and store failure: what happens around the requests. */
class RateLimitFeatureLifecycleTest {

    private static final Duration PATIENCE = Duration.ofSeconds(20);

    private static String client() {
        return UUID.randomUUID().toString();
    }

    private static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
    }

    private static Throwable rootOf(Throwable thrown) {
        Throwable t = thrown;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    private static String messages(Throwable thrown) {
        List<String> all = new ArrayList<>();
        for (Throwable t = thrown; t != null; t = t.getCause() == t ? null : t.getCause()) {
            all.add(String.valueOf(t.getMessage()));
        }
        return String.join(" | ", all);
    }

    @Test
    void aBadAnnotationFailsStartUpNamingTheMethodTheAttributeAndTheValue() {
        assertThatThrownBy(() -> JerseyApp.start(new ResourceConfig(Resources.BadLimit.class)
                .register(RateLimitFeature.class)).close())
                .satisfies(thrown -> assertThat(messages(thrown))
                        .contains("@RateLimit on resource method 'dev.sluice.jaxrs.Resources$BadLimit.get': "
                                + "'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'"));
    }

    @Test
    void repeatedLimitsWithDifferentKeysFailStartUpNamingBoth() {
        assertThatThrownBy(() -> JerseyApp.start(new ResourceConfig(Resources.DifferentKeys.class)
                .register(RateLimitFeature.class)).close())
                .satisfies(thrown -> assertThat(messages(thrown))
                        .contains("Resources$DifferentKeys.get")
                        .contains("'ip' (policy 'per-address') and 'principal' (policy 'per-user')"));
    }

    /** A concurrency limit failing locally used to fail open without a word: leases cannot be kept locally. */
    @Test
    void aConcurrencyLimitFailingLocallyFailsStartUpNamingTheMethodTheAttributeAndTheValue() {
        assertThatThrownBy(() -> JerseyApp.start(new ResourceConfig(Resources.LocalCap.class)
                .register(RateLimitFeature.class)).close())
                .satisfies(thrown -> assertThat(messages(thrown))
                        .contains("@RateLimit on resource method 'dev.sluice.jaxrs.Resources$LocalCap.get': "
                                + "'failure-mode' of concurrency policy 'cap-local' must be open or closed: its leases "
                                + "are held in the store alone, so no local limiter can take over while the store "
                                + "fails, got 'local'"));
    }

    @Test
    void aBadPropertyFailsStartUpNamingThePropertyAndTheValue() {
        assertThatThrownBy(() -> JerseyApp.start(new ResourceConfig(Resources.IpLimited.class)
                .register(RateLimitFeature.class).property("sluice.timeout", "5 seconds")).close())
                .satisfies(thrown -> assertThat(messages(thrown))
                        .contains("JAX-RS property 'sluice.timeout': 'timeout' must look like")
                        .contains("got '5 seconds'"));
        assertThatThrownBy(() -> JerseyApp.start(new ResourceConfig(Resources.IpLimited.class)
                .register(RateLimitFeature.class).property("sluice.timout", "50ms")).close())
                .satisfies(thrown -> assertThat(messages(thrown)).contains("'sluice.timout' is not a Sluice"));
    }

    @Test
    void theIpKeyIsTheSocketPeerOnAServletContainer() throws Exception {
        // Default store: memory, one per application.
        try (JerseyApp app =
                JerseyApp.start(new ResourceConfig(Resources.IpLimited.class).register(RateLimitFeature.class))) {
            assertThat(app.get("/ip").statusCode()).isEqualTo(200);
            assertThat(app.get("/ip").statusCode()).isEqualTo(200);
            // A forwarding header from an untrusted peer does not buy a new identity.
            HttpResponse<String> rejected = app.get("/ip", "X-Forwarded-For", "203.0.113.9");
            assertThat(rejected.statusCode()).isEqualTo(429);
        }
        try (JerseyApp app =
                JerseyApp.start(new ResourceConfig(Resources.IpLimited.class).register(RateLimitFeature.class)
                .property("sluice.trusted-proxies", "127.0.0.1").property("sluice.headers", "draft"))) {
            // Behind a trusted proxy (127.0.0.1 here), the forwarded client is the caller.
            assertThat(app.get("/ip", "X-Forwarded-For", "203.0.113.9").statusCode()).isEqualTo(200);
            assertThat(app.get("/ip", "X-Forwarded-For", "203.0.113.9").statusCode()).isEqualTo(200);
            assertThat(app.get("/ip", "X-Forwarded-For", "203.0.113.9").statusCode()).isEqualTo(429);
            HttpResponse<String> other = app.get("/ip", "X-Forwarded-For", "203.0.113.10");
            assertThat(other.statusCode()).isEqualTo(200);
            assertThat(header(other, "RateLimit")).isEqualTo("\"IpLimited.get~c0423578\";r=1;t=30");
            assertThat(header(other, "RateLimit-Remaining")).isNull();
        }
    }

    @Test
    void behindAForwardedProxyTheClientIsItsSlash64AndInjectedXForwardedForIsIgnored() throws Exception {
        try (JerseyApp app =
                JerseyApp.start(new ResourceConfig(Resources.IpLimited.class).register(RateLimitFeature.class)
                .property("sluice.trusted-proxies", "127.0.0.1").property("sluice.forwarded-header", "forwarded"))) {
            // Two addresses of one /64, each with an X-Forwarded-For the client made up: one budget of 2.
            assertThat(app.get("/ip", "Forwarded", "for=\"[2001:db8:5:6::1]:443\"", "X-Forwarded-For", "198.51.100.1")
                    .statusCode()).isEqualTo(200);
            assertThat(app.get("/ip", "Forwarded", "for=\"[2001:DB8:5:6:AAAA::2]\"", "X-Forwarded-For", "198.51.100.2")
                    .statusCode()).isEqualTo(200);
            assertThat(app.get("/ip", "Forwarded", "for=\"[2001:db8:5:6:ffff::3]\"", "X-Forwarded-For", "198.51.100.3")
                    .statusCode()).isEqualTo(429);
            // Another /64 is another caller.
            assertThat(app.get("/ip", "Forwarded", "for=\"[2001:db8:5:7::1]\"").statusCode()).isEqualTo(200);
            // An unknown client is the proxy, whatever the client wrote to its left.
            assertThat(app.get("/ip", "Forwarded", "for=203.0.113.1, for=unknown").statusCode()).isEqualTo(200);
            assertThat(app.get("/ip", "Forwarded", "for=203.0.113.2, for=_hidden").statusCode()).isEqualTo(200);
            assertThat(app.get("/ip", "Forwarded", "for=203.0.113.3, for=unknown").statusCode()).isEqualTo(429);
        }
        try (JerseyApp app =
                JerseyApp.start(new ResourceConfig(Resources.IpLimited.class).register(RateLimitFeature.class)
                .property("sluice.trusted-proxies", "127.0.0.1").property("sluice.ipv6-prefix", "128"))) {
            // Per address at /128, in whichever form the proxy wrote it.
            assertThat(app.get("/ip", "X-Forwarded-For", "2001:db8:5:6::1").statusCode()).isEqualTo(200);
            assertThat(app.get("/ip", "X-Forwarded-For", "[2001:DB8:5:6:0:0:0:1]:443").statusCode()).isEqualTo(200);
            assertThat(app.get("/ip", "X-Forwarded-For", "2001:db8:5:6::1").statusCode()).isEqualTo(429);
            assertThat(app.get("/ip", "X-Forwarded-For", "2001:db8:5:6::2").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void badClientAddressPropertiesFailStartUpNamingThePropertyAndTheValue() {
        assertThatThrownBy(() -> JerseyApp.start(new ResourceConfig(Resources.IpLimited.class)
                .register(RateLimitFeature.class).property("sluice.forwarded-header", "x-real-ip")).close())
                .satisfies(thrown -> assertThat(messages(thrown)).contains("JAX-RS property 'sluice.forwarded-header': "
                        + "'forwarded-header' must be x-forwarded-for or forwarded, got 'x-real-ip'"));
        assertThatThrownBy(() -> JerseyApp.start(new ResourceConfig(Resources.IpLimited.class)
                .register(RateLimitFeature.class).property("sluice.ipv6-prefix", "129")).close())
                .satisfies(thrown -> assertThat(messages(thrown)).contains("JAX-RS property 'sluice.ipv6-prefix': "
                        + "'ipv6-prefix' must be an integer from 32 to 128, got '129'"));
    }

    @Test
    void twoApplicationsShareOnePolicyThroughOneRedis() throws Exception {
        String redis = TestRedis.shared().url();
        try (JerseyApp one = JerseyApp.start(new ResourceConfig(Resources.Shared.class).register(RateLimitFeature.class)
                .property("sluice.store", redis).property("sluice.timeout", "2s"));
             JerseyApp two = JerseyApp.start(new ResourceConfig(Resources.Shared.class).register(RateLimitFeature.class)
                     .property("sluice.store", redis).property("sluice.timeout", "2s"))) {
            String me = client();
            assertThat(one.get("/shared", "X-Client", me).statusCode()).isEqualTo(200);
            assertThat(header(two.get("/shared", "X-Client", me), "RateLimit-Remaining")).isEqualTo("1");
            assertThat(one.get("/shared", "X-Client", me).statusCode()).isEqualTo(200);
            assertThat(two.get("/shared", "X-Client", me).statusCode()).isEqualTo(429);
            assertThat(one.get("/shared", "X-Client", me).statusCode()).isEqualTo(429);
        }
    }

    @Test
    void whenRedisIsDownClosedRoutesAnswer503AndOpenOnesPassThenLimitingResumes() throws Exception {
        TestRedis redis = TestRedis.start();
        try (JerseyApp app =
                JerseyApp.start(new ResourceConfig(Resources.FailureModes.class).register(RateLimitFeature.class)
                .property("sluice.store", redis.url()).property("sluice.timeout", "300ms"))) {
            String me = client();
            assertThat(header(app.get("/failure/open", "X-Client", me), "RateLimit-Remaining")).isEqualTo("1");
            assertThat(app.get("/failure/closed", "X-Client", me).statusCode()).isEqualTo(200);

            redis.stop();
            HttpResponse<String> closed = app.get("/failure/closed", "X-Client", me);
            assertThat(closed.statusCode()).isEqualTo(503);
            assertThat(Long.parseLong(header(closed, "Retry-After"))).isGreaterThanOrEqualTo(1);
            assertThat(header(closed, "Content-Type")).startsWith("application/problem+json");
            assertThat(closed.body()).contains("\"status\":503");
            for (int i = 0; i < 4; i++) { // more than the limit of 2: nobody is counting
                HttpResponse<String> open = app.get("/failure/open", "X-Client", me);
                assertThat(open.statusCode()).isEqualTo(200);
                assertThat(open.body()).isEqualTo("open");
                assertThat(header(open, "RateLimit-Limit")).isNull();
            }

            redis.restart(); // empty: the restarted server kept nothing
            // Polled as a caller of its own: a poll that timed out on a busy machine was still
            // charged by Redis (once), which must not eat the budget counted below.
            String poller = client();
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            HttpResponse<String> polled = app.get("/failure/open", "X-Client", poller);
            while (header(polled, "RateLimit-Limit") == null) {
                if (System.nanoTime() > deadline) {
                    fail("limiting did not resume within " + PATIENCE + " of Redis coming back");
                }
                Thread.sleep(100); // bounded polling
                polled = app.get("/failure/open", "X-Client", poller);
            }
            String fresh = client();
            HttpResponse<String> resumed = app.get("/failure/open", "X-Client", fresh);
            assertThat(resumed.statusCode()).isEqualTo(200);
            assertThat(header(resumed, "RateLimit-Remaining")).isEqualTo("1");
            assertThat(app.get("/failure/open", "X-Client", fresh).statusCode()).isEqualTo(200);
            assertThat(app.get("/failure/open", "X-Client", fresh).statusCode()).isEqualTo(429);
            assertThat(app.get("/failure/closed", "X-Client", fresh).statusCode()).isEqualTo(200);
        } finally {
            redis.stop();
        }
    }

    @Test
    void theStoreOpenedFromPropertiesIsClosedWhenTheApplicationStops() throws Exception {
        TestRedis redis = TestRedis.start();
        RedissonClient observer = redis.newClient();
        try {
            RedisNode node = observer.getRedisNodes(RedisNodes.SINGLE).getInstance();
            long before = connectedClients(node);
            JerseyApp app = JerseyApp.start(new ResourceConfig(Resources.Shared.class).register(RateLimitFeature.class)
                    .property("sluice.store", redis.url()).property("sluice.timeout", "2s"));
            try {
                assertThat(header(app.get("/shared", "X-Client", client()), "RateLimit-Limit")).isEqualTo("3");
                assertThat(connectedClients(node)).isGreaterThan(before);
            } finally {
                app.close();
            }
            long deadline = System.nanoTime() + PATIENCE.toNanos();
            while (connectedClients(node) > before) {
                if (System.nanoTime() > deadline) {
                    fail("the feature's Redis connections were still open " + PATIENCE
                            + " after the application stopped");
                }
                Thread.sleep(100); // bounded polling: Redis sees closed sockets shortly after
            }
        } finally {
            observer.shutdown();
            redis.stop();
        }
    }

    @Test
    void aStoreGivenInJavaIsUsedAndLeftOpen() throws Exception {
        try (RedisStore store = RedisStore.connect(TestRedis.shared().url())) {
            String me = client();
            try (JerseyApp app = JerseyApp.start(new ResourceConfig(Resources.Shared.class)
                    .register(new RateLimitFeature(store)).property("sluice.timeout", "2s"))) {
                assertThat(header(app.get("/shared", "X-Client", me), "RateLimit-Remaining")).isEqualTo("2");
            }
            // The application is gone; the store is still the caller's, open, and holds what the application spent.
            Decision after = RateLimiter.builder().limit(Limit.of("shared", "3/1m")).store(store)
                    .timeout(Duration.ofSeconds(2)).build().decide("key~" + me);
            assertThat(after.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(after.remaining()).isEqualTo(1);
        }
    }

    private static long connectedClients(RedisNode node) {
        return Long.parseLong(node.info(RedisNode.InfoSection.CLIENTS).get("connected_clients"));
    }
}
