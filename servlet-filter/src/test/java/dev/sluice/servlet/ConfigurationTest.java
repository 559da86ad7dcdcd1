package dev.sluice.servlet;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import dev.sluice.web.HeaderStyle;
import dev.sluice.web.internal.PolicyNames;
import jakarta.servlet.ServletException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Configuration: bad init-params stop deployment with a precise message; filters built in Java. */
class ConfigurationTest {

    static Iterable<Container> containers() {
        return Container.selected();
    }

    /** Starts the application, expecting deployment to fail; returns the filter's ServletException. */
    private static ServletException deploymentFailure(Container container, TestApp app) {
        Throwable thrown = null;
        try {
            container.start(app).close(); // reached only if the context started: the assertion below fails
        } catch (Throwable t) {
            thrown = t;
        }
        assertThat(thrown).as("deployment should have failed").isInstanceOf(TestApp.DeploymentFailed.class);
        TestApp.DeploymentFailed deployment = (TestApp.DeploymentFailed) thrown;
        assertThat(deployment.contextFailed).as("context failed").isTrue();
        assertThat(deployment.contextAvailable).as("context available").isFalse();
        List<Throwable> chain = new ArrayList<>();
        collect(thrown, chain);
        Throwable failure = thrown;
        return chain.stream().filter(ServletException.class::isInstance).map(ServletException.class::cast)
                .filter(e -> e.getMessage() != null && e.getMessage().startsWith("filter '"))
                .findFirst().orElseThrow(() -> new AssertionError("no ServletException from the filter in", failure));
    }

    private static void collect(Throwable t, List<Throwable> into) {
        if (t == null || into.contains(t)) {
            return;
        }
        into.add(t);
        collect(t.getCause(), into);
        for (Throwable suppressed : t.getSuppressed()) {
            collect(suppressed, into);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aMalformedLimitFailsDeploymentNamingFilterParamAndValue(Container container) {
        TestApp app = new TestApp()
                .filter("fine", "/fine/*", "limit", "10/s")
                .filter("search", "/search/*", "limit", "100/minutes");
        assertThat(deploymentFailure(container, app)).hasMessage(
                "filter 'search': init-param 'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void anUnknownInitParamFailsDeployment(Container container) {
        TestApp app = new TestApp().filter("search", "/*", "limit", "10/s", "limt", "20/s");
        assertThat(deploymentFailure(container, app).getMessage())
                .startsWith("filter 'search': init-param 'limt' is not a Sluice parameter; known: ");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void otherBadValuesNameTheirParameter(Container container) {
        assertThat(deploymentFailure(container, new TestApp().filter("a", "/*", "key", "ip"))).hasMessage(
                "filter 'a': init-param 'limit' is required, e.g. 100/1m");
        assertThat(deploymentFailure(container,
                new TestApp().filter("b", "/*", "limit", "1/s", "store", "mongodb://x")))
                .hasMessageStartingWith("filter 'b': init-param 'store' must be memory")
                .hasMessageEndingWith("got 'mongodb://x'");
        assertThat(deploymentFailure(container,
                new TestApp().filter("c", "/*", "limit", "1/s", "failure-mode", "ajar")))
                .hasMessage("filter 'c': init-param 'failure-mode' must be open, closed or local, got 'ajar'");
        assertThat(deploymentFailure(container, new TestApp().filter("d", "/*", "limit", "1/s",
                "trusted-proxies", "10.0.0.0/33")))
                .hasMessageStartingWith("filter 'd': init-param 'trusted-proxies' must be")
                .hasMessageEndingWith("got '10.0.0.0/33'");
    }

    /** A concurrency limit failing locally used to fail open without a word: leases cannot be kept locally. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aConcurrencyLimitFailingLocallyFailsDeploymentNamingParamAndValue(Container container) {
        assertThat(deploymentFailure(container, new TestApp().filter("caps", "/*", "algorithm", "concurrency",
                "limit", "5", "failure-mode", "local"))).hasMessage("filter 'caps': init-param 'failure-mode' of "
                + "concurrency policy 'caps' must be open or closed: its leases are held in the store alone, so no "
                + "local limiter can take over while the store fails, got 'local'");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void badClientAddressSettingsFailDeploymentNamingParamAndValue(Container container) {
        assertThat(deploymentFailure(container, new TestApp().filter("e", "/*", "limit", "1/s",
                "forwarded-header", "x-real-ip"))).hasMessage("filter 'e': init-param 'forwarded-header' must be "
                + "x-forwarded-for or forwarded, got 'x-real-ip'");
        for (String bad : List.of("31", "129", "0", "-64", "64bits", "sixty-four", "99999999999999999999")) {
            assertThat(deploymentFailure(container, new TestApp().filter("f", "/*", "limit", "1/s",
                    "ipv6-prefix", bad))).hasMessage("filter 'f': init-param 'ipv6-prefix' must be an integer from 32 "
                    + "to 128, got '" + bad + "'");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aFilterBuiltInJavaIsRegisteredThroughTheServletContextAndLeavesItsStoreOpen(Container container)
            throws Exception {
        MemoryStore store = MemoryStore.create();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("prog", "2/1m")).store(store).build();
        RateLimitFilter filter = new RateLimitFilter(limiter).withKey("header:X-API-Key,ip")
                .withHeaders(HeaderStyle.BOTH);
        try (var running = container.start(new TestApp().programmatic("prog", filter, "/api/*"))) {
            HttpResponse<String> first = get(running.uri("/api/x"), "X-API-Key", "k");
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(header(first, "RateLimit-Remaining")).isEqualTo("1");
            assertThat(header(first, "RateLimit")).isEqualTo("\"prog\";r=1;t=30");
            assertThat(get(running.uri("/api/x"), "X-API-Key", "k").statusCode()).isEqualTo(200);
            assertThat(get(running.uri("/api/x"), "X-API-Key", "k").statusCode()).isEqualTo(429);
            assertThat(get(running.uri("/api/x")).statusCode()).isEqualTo(200); // by address
            assertThat(get(running.uri("/free")).statusCode()).isEqualTo(200);
        }
        // The application stopped; the limiter it built still decides on its store.
        assertThat(limiter.decide("key~k").outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(limiter.decide("someone-else").outcome()).isEqualTo(Decision.Outcome.ALLOWED);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aFilterBuiltInJavaRefusesInitParams(Container container) {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("prog", "2/1m")).build();
        TestApp app = new TestApp().instance("prog", new RateLimitFilter(limiter), "/*", "limit", "5/s");
        assertThat(deploymentFailure(container, app)).hasMessageStartingWith(
                "filter 'prog': init-param 'limit' cannot configure a filter built around a RateLimiter");
    }

    @Test
    void javaSettingsAreValidatedAtOnceAndOnlyApplyToAGivenLimiter() {
        RateLimitFilter filter = new RateLimitFilter(RateLimiter.builder().limit(Limit.of("p", "1/s")).build());
        assertThatThrownBy(() -> filter.withKey("cookie:session"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got 'cookie:session'");
        assertThatThrownBy(() -> filter.withTrustedProxies("10.0.0.0/99"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got '10.0.0.0/99'");
        assertThat(filter.withTrustedProxies("10.0.0.0/8, ::1")).isNotSameAs(filter);
        assertThatThrownBy(() -> new RateLimitFilter().withHeaders(HeaderStyle.NONE))
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void defaultPolicyReplacesCharactersOutsideThePolicyCharset() {
        assertThat(PolicyNames.forFilter("search")).isEqualTo("search");
        assertThat(PolicyNames.forFilter("Search API (v2)")).isEqualTo("Search-API--v2-");
        assertThat(PolicyNames.forFilter("x".repeat(100))).hasSize(64);
        assertThat(Limit.of(PolicyNames.forFilter("ünïcode/ä"), "1/s").policy()).isEqualTo("-n-code--");
    }
}
