package dev.sluice.examples;

import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static dev.sluice.examples.Http.get;
import static dev.sluice.examples.Http.header;
import static dev.sluice.examples.Http.json;
import static dev.sluice.examples.Http.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the examples WAR answers, whatever container runs it: each subclass deploys the same WAR
 * file in its container and must pass every test here unchanged. Each test spends the budget of
 * its own API key, so the tests share one deployment.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class WarContract {

    private Deployed app;

    /** Deploys the packaged WAR file with these context-params, on 127.0.0.1 and a free port. */
    abstract Deployed deploy(Map<String, String> contextParams) throws Exception;

    @BeforeAll
    void deployWithTheDefaultStore() throws Exception {
        app = deploy(Map.of());
        // Warm up (class loading, Jersey's first request) on a key no test uses, so that the
        // tests' requests follow each other within milliseconds.
        get(app, "hello", "warm-up");
        get(app, "api/bucket", "warm-up");
    }

    @AfterAll
    void undeploy() {
        if (app != null) {
            app.close();
        }
    }

    @Test
    void indexPageListsTheEndpoints() {
        HttpResponse<String> index = get(app, "", null);
        assertThat(index.statusCode()).isEqualTo(200);
        assertThat(header(index, "Content-Type")).startsWith("text/html");
        assertThat(index.body()).contains("/hello", "/api/bucket", "/api/window", "/api/search", "/api/orders",
                "curl -i -H 'X-API-Key: demo'");
        assertThat(header(index, "RateLimit-Limit")).as("the index is not limited").isNull();
    }

    @Test
    void servletFilterAdmitsFivePerKeyThenAnswers429WithAProblem() {
        // web.xml: limit=5/10s (token bucket: 5 at once, one more every 2 s), headers=both.
        for (int i = 1; i <= 5; i++) {
            HttpResponse<String> ok = get(app, "hello", "servlet-filter");
            assertThat(ok.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(ok.body()).startsWith("Hello from a plain servlet");
            assertThat(header(ok, "RateLimit-Limit")).isEqualTo("5");
            assertThat(header(ok, "RateLimit-Remaining")).isEqualTo(Integer.toString(5 - i));
            // the next unit comes in 2 s, however many are spent (the whole budget only in 2 * i s)
            assertThat(header(ok, "RateLimit-Reset")).isEqualTo("2");
            assertThat(header(ok, "RateLimit-Policy")).isEqualTo("\"hello\";q=5;w=10");
            assertThat(header(ok, "RateLimit")).isEqualTo("\"hello\";r=" + (5 - i) + ";t=2");
        }
        HttpResponse<String> refused = get(app, "hello", "servlet-filter");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(header(refused, "Retry-After")).isEqualTo("2");
        assertThat(header(refused, "Content-Type")).startsWith("application/problem+json");
        assertThat(header(refused, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(refused, "RateLimit")).isEqualTo("\"hello\";r=0;t=2");
        assertThat(json(refused)).containsEntry("status", 429L).containsEntry("title", "Too Many Requests")
                .containsEntry("policy", "hello").containsEntry("type", "about:blank");

        // Another API key has a budget of its own.
        assertThat(get(app, "hello", "servlet-filter-other").statusCode()).isEqualTo(200);
    }

    @Test
    void theMetricsPageCountsTheDecisionsMade() {
        long allowed = metric("sluice.decisions{outcome=allowed,policy=hello}");
        long rejected = metric("sluice.decisions{outcome=rejected,policy=hello}");
        String key = "metrics-" + java.util.UUID.randomUUID();
        List<HttpResponse<String>> six = times(6, () -> get(app, "hello", key));
        assertThat(six).extracting(HttpResponse::statusCode).containsExactly(200, 200, 200, 200, 200, 429);
        assertThat(metric("sluice.decisions{outcome=allowed,policy=hello}") - allowed).isEqualTo(5);
        assertThat(metric("sluice.decisions{outcome=rejected,policy=hello}") - rejected).isEqualTo(1);
        assertThat(get(app, "metrics", "reader").body()).contains("sluice.decision.latency{policy=hello}");
        // The JAX-RS resources publish to the application's registry too.
        long health = metric("sluice.decisions{outcome=allowed,policy=bucket}");
        assertThat(get(app, "api/bucket", key).statusCode()).isEqualTo(200);
        assertThat(metric("sluice.decisions{outcome=allowed,policy=bucket}") - health).isEqualTo(1);
    }

    /** A counter's value on the {@code /metrics} page, 0 if it is not there yet. */
    private long metric(String name) {
        for (String line : get(app, "metrics", "reader").body().split("\n")) {
            if (line.startsWith(name + " ")) {
                return Long.parseLong(line.substring(name.length() + 1).trim());
            }
        }
        return 0;
    }

    @Test
    void tokenBucketAdmitsABurstOfFiveThen429() {
        List<HttpResponse<String>> burst = times(5, () -> get(app, "api/bucket", "bucket"));
        assertThat(burst).extracting(HttpResponse::statusCode).containsOnly(200);
        assertThat(burst).extracting(r -> header(r, "RateLimit-Remaining")).containsExactly("4", "3", "2", "1", "0");
        assertThat(burst).extracting(r -> header(r, "RateLimit-Limit")).as("the bucket's size, not its rate")
                .containsOnly("5");
        assertThat(burst.get(0).body()).startsWith("token bucket");

        HttpResponse<String> refused = get(app, "api/bucket", "bucket");
        assertRefused(refused, "bucket");
        assertThat(header(refused, "Retry-After")).isEqualTo("1");
    }

    @Test
    void slidingWindowAdmitsFiveAMinuteThen429() {
        List<HttpResponse<String>> window = times(5, () -> get(app, "api/window", "window"));
        assertThat(window).extracting(HttpResponse::statusCode).containsOnly(200);
        assertThat(window).extracting(r -> header(r, "RateLimit-Limit")).containsOnly("5");
        assertThat(window).extracting(r -> header(r, "RateLimit-Remaining")).containsExactly("4", "3", "2", "1", "0");

        HttpResponse<String> refused = get(app, "api/window", "window");
        assertRefused(refused, "window");
        // Into the next window, where these 5 still weigh (60 - e) / 60: room for one more 12 s in,
        // so up to 60 + 12 s from the start of the current window.
        assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 72L);
    }

    @Test
    void twoLimitsOnOneMethodAreDecidedTogether() {
        // Bursts of 3 (2/s) and 10 a minute: the burst binds first.
        List<HttpResponse<String>> burst = times(3, () -> get(app, "api/search", "search"));
        assertThat(burst).extracting(HttpResponse::statusCode).containsOnly(200);
        HttpResponse<String> refused = get(app, "api/search", "search");
        assertRefused(refused, "search");
    }

    @Test
    void failClosedRouteLimitsOrdersToThreeAMinute() {
        List<HttpResponse<String>> orders = times(3, () -> post(app, "api/orders", "orders"));
        assertThat(orders).extracting(HttpResponse::statusCode).containsOnly(200);
        assertThat(orders.get(0).body()).startsWith("order accepted");
        assertRefused(post(app, "api/orders", "orders"), "orders");
    }

    @Test
    void unannotatedResourceIsNotLimited() {
        List<HttpResponse<String>> health = times(12, () -> get(app, "api/health", "health"));
        assertThat(health).extracting(HttpResponse::statusCode).containsOnly(200);
        assertThat(health).extracting(r -> header(r, "RateLimit-Limit")).containsOnlyNulls();
    }

    @Test
    void withRedisDownOpenRoutesAnswerAndTheClosedRouteAnswers503() throws Exception {
        // A Redis URL on a port where nothing listens: the application still starts (the store
        // connects lazily) and each route follows its failure mode.
        String deadRedis = "redis://127.0.0.1:" + TestRedis.freePort();
        try (Deployed down = deploy(Map.of("sluice.store", deadRedis))) {
            HttpResponse<String> hello = get(down, "hello", "down");
            assertThat(hello.statusCode()).isEqualTo(200);
            assertThat(header(hello, "RateLimit-Limit")).as("no headers when the store failed").isNull();

            HttpResponse<String> bucket = get(down, "api/bucket", "down");
            assertThat(bucket.statusCode()).isEqualTo(200);
            assertThat(header(bucket, "RateLimit-Limit")).isNull();

            HttpResponse<String> order = post(down, "api/orders", "down");
            assertThat(order.statusCode()).isEqualTo(503);
            assertThat(header(order, "Retry-After")).isNotNull();
            assertThat(header(order, "Content-Type")).startsWith("application/problem+json");
            assertThat(json(order)).containsEntry("status", 503L);
        }
    }

    @Test
    void aBadStoreFailsTheDeployment() {
        // Sluice's rule: bad configuration stops start-up rather than running half-limited.
        // (Each container reports it its own way; the message naming the value is in its log.)
        assertThatThrownBy(() -> deploy(Map.of("sluice.store", "mongo://x")).close())
                .isInstanceOf(Exception.class);
    }

    static void assertRefused(HttpResponse<String> refused, String policy) {
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(header(refused, "Retry-After"))).isPositive();
        assertThat(header(refused, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(refused, "Content-Type")).startsWith("application/problem+json");
        assertThat(json(refused)).containsEntry("status", 429L).containsEntry("policy", policy);
    }

    static List<HttpResponse<String>> times(int n, Supplier<HttpResponse<String>> request) {
        List<HttpResponse<String>> responses = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            responses.add(request.get());
        }
        return responses;
    }
}
