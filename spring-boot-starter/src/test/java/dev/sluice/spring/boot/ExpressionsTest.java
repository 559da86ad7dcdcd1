package dev.sluice.spring.boot;

import org.junit.jupiter.api.Test;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sluice.filters.<name>.key-expression} and {@code skip-expression}: SpEL over the request and
 * the principal, parsed at start-up, in a started application over real HTTP.
 */
class ExpressionsTest {

    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    @Test
    void aKeyExpressionKeysByAHeader() throws Exception {
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(),
                "sluice.filters.tenants.limit=1/1m", "sluice.filters.tenants.url-patterns=/api/*",
                "sluice.filters.tenants.key-expression=request.header('X-Tenant')?.toLowerCase()",
                "sluice.filters.tenants.policy=tenants-" + System.nanoTime())) {
            int port = BootApps.port(app);
            // One client address, two tenants: two budgets; the expression's case folding makes A and a one.
            assertThat(get(port, "/api/200", "X-Tenant", "a").statusCode()).isEqualTo(200);
            assertThat(get(port, "/api/200", "X-Tenant", "A").statusCode()).isEqualTo(429);
            assertThat(get(port, "/api/200", "X-Tenant", "b").statusCode()).isEqualTo(200);
            // No header: null, the key sources (ip) decide, a budget of its own.
            assertThat(get(port, "/api/200", "X-Other", "a").statusCode()).isEqualTo(200);
            assertThat(get(port, "/api/200", "X-Other", "a").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aSkipExpressionLeavesRequestsAloneByPathOrHeader() throws Exception {
        try (ConfigurableApplicationContext app = BootApps.start(Map.of(),
                "sluice.filters.api.limit=1/1m", "sluice.filters.api.url-patterns=/api/*",
                "sluice.filters.api.skip-expression=request.path == '/api/204'"
                        + " or #request.header('X-Internal') == 'yes' and request.method == 'GET'"
                        + " and principal == null",
                "sluice.filters.api.policy=skip-" + System.nanoTime())) {
            int port = BootApps.port(app);
            for (int i = 0; i < 3; i++) {
                HttpResponse<Void> skipped = get(port, "/api/204", "X-Internal", "no");
                assertThat(skipped.statusCode()).as("skipped path, request %d", i).isEqualTo(204);
                assertThat(skipped.headers().firstValue("RateLimit-Limit")).as("no headers").isEmpty();
                assertThat(get(port, "/api/200", "X-Internal", "yes").statusCode()).as("by header").isEqualTo(200);
            }
            // Nothing was charged by the skipped requests: the caller's one request is still there.
            HttpResponse<Void> limited = get(port, "/api/200", "X-Internal", "no");
            assertThat(limited.statusCode()).isEqualTo(200);
            assertThat(limited.headers().firstValue("RateLimit-Limit")).hasValue("1");
            assertThat(get(port, "/api/200", "X-Internal", "no").statusCode()).isEqualTo(429);
        }
    }

    @Test
    void aBadExpressionStopsStartUpNamingThePropertyAndTheValue() {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filters.api.limit=1/1m",
                "sluice.filters.api.key-expression=request.header('X-Tenant'");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.filters.api.key-expression' is no SpEL")
                .contains("got 'request.header('X-Tenant''");
        SluiceConfigurationException cause = cause(thrown);
        FailureAnalysis analysis = new SluiceFailureAnalyzer().analyze(thrown);
        assertThat(cause.property()).isEqualTo("sluice.filters.api.key-expression");
        assertThat(analysis.getDescription()).contains("sluice.filters.api.key-expression");
    }

    @Test
    void anExpressionReachingForTypesStopsStartUp() {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filters.api.limit=1/1m",
                "sluice.filters.api.skip-expression=T(java.lang.System).exit(1) == null");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.filters.api.skip-expression' may only read")
                .contains("a type reference").contains("got 'T(java.lang.System).exit(1) == null'");
    }

    @Test
    void aKeyExpressionAndAKeyResolverOnOneFilterStopStartUp() {
        Throwable thrown = BootApps.failure(Map.of(), new Class<?>[] {BootApps.App.class,
                ResolverBeansTest.Resolvers.class}, "sluice.filters.api.limit=1/1m",
                "sluice.filters.api.key-expression=principal", "sluice.filters.api.key-resolver=tenant");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.filters.api.key-expression' and property "
                + "'sluice.filters.api.key-resolver' both name the caller");
    }

    private static SluiceConfigurationException cause(Throwable thrown) {
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t instanceof SluiceConfigurationException e) {
                return e;
            }
        }
        throw new AssertionError("no SluiceConfigurationException in " + thrown);
    }

    private static HttpResponse<Void> get(int port, String path, String header, String value) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header(header, value).GET().build();
        return CLIENT.send(request, HttpResponse.BodyHandlers.discarding());
    }
}
