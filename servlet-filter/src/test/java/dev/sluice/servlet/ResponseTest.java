package dev.sluice.servlet;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.http.HttpResponse;
import java.util.Map;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

/** What the filter writes: the rate-limit headers in every style, 429 answers and their bodies. */
class ResponseTest {

    static Iterable<Container> containers() {
        return Container.selected();
    }

    private static final String[] RATE_LIMIT_HEADERS = {"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
        "RateLimit-Policy", "RateLimit"};

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void headerStylesWriteExactValues(Container container) throws Exception {
        TestApp app = new TestApp()
                .filter("legacy", "/legacy/*", "limit", "5/1m")
                .filter("draft", "/draft/*", "limit", "5/1m", "headers", "draft")
                .filter("both", "/both/*", "limit", "5/1m", "headers", "both", "policy", "api.v2")
                .filter("none", "/none/*", "limit", "5/1m", "headers", "none");
        try (var running = container.start(app)) {
            // 5 per minute: one token every 12 s, so one spent request is fully restored in 12 s.
            HttpResponse<String> legacy = get(running.uri("/legacy/x"));
            assertThat(legacy.statusCode()).isEqualTo(200);
            assertThat(legacy.body()).isEqualTo("ok");
            assertThat(header(legacy, "RateLimit-Limit")).isEqualTo("5");
            assertThat(header(legacy, "RateLimit-Remaining")).isEqualTo("4");
            assertThat(header(legacy, "RateLimit-Reset")).isEqualTo("12");
            assertThat(header(legacy, "RateLimit-Policy")).isNull();
            assertThat(header(legacy, "RateLimit")).isNull();

            HttpResponse<String> draft = get(running.uri("/draft/x"));
            assertThat(draft.statusCode()).isEqualTo(200);
            assertThat(header(draft, "RateLimit-Policy")).isEqualTo("\"draft\";q=5;w=60");
            assertThat(header(draft, "RateLimit")).isEqualTo("\"draft\";r=4;t=12");
            assertThat(header(draft, "RateLimit-Limit")).isNull();
            assertThat(header(draft, "RateLimit-Remaining")).isNull();

            get(running.uri("/both/x"));
            HttpResponse<String> both = get(running.uri("/both/x"));
            assertThat(header(both, "RateLimit-Limit")).isEqualTo("5");
            assertThat(header(both, "RateLimit-Remaining")).isEqualTo("3");
            // two spent: the next of them is back in 12 s (the whole budget in 24 s)
            assertThat(header(both, "RateLimit-Reset")).isEqualTo("12");
            assertThat(header(both, "RateLimit-Policy")).isEqualTo("\"api.v2\";q=5;w=60");
            assertThat(header(both, "RateLimit")).isEqualTo("\"api.v2\";r=3;t=12");

            HttpResponse<String> none = get(running.uri("/none/x"));
            assertThat(none.statusCode()).isEqualTo(200);
            for (String name : RATE_LIMIT_HEADERS) {
                assertThat(header(none, name)).as(name).isNull();
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void rejectionIs429WithRetryAfterHeadersAndProblemBody(Container container) throws Exception {
        TestApp app = new TestApp().filter("search", "/search/*", "limit", "1/1m", "headers", "both");
        try (var running = container.start(app)) {
            assertThat(get(running.uri("/search/q")).statusCode()).isEqualTo(200);

            HttpResponse<String> rejected = get(running.uri("/search/q"));
            assertThat(rejected.statusCode()).isEqualTo(429);
            assertThat(header(rejected, "Retry-After")).isEqualTo("60");
            assertThat(header(rejected, "RateLimit-Limit")).isEqualTo("1");
            assertThat(header(rejected, "RateLimit-Remaining")).isEqualTo("0");
            assertThat(header(rejected, "RateLimit-Reset")).isEqualTo("60");
            assertThat(header(rejected, "RateLimit")).isEqualTo("\"search\";r=0;t=60");
            assertThat(header(rejected, "Content-Type")).startsWith("application/problem+json");
            Map<String, Object> problem = Http.json(rejected);
            assertThat(problem).containsEntry("type", "about:blank").containsEntry("title", "Too Many Requests")
                    .containsEntry("status", 429L).containsEntry("policy", "search");
            assertThat((String) problem.get("detail")).contains("retry after 60 s");
            assertThat(rejected.body()).doesNotContain("ok");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void rejectionReportsRemainingZeroEvenWhenUnitsAreLeft(Container container) throws Exception {
        // 3 per minute, 2 per request: after one request 1 unit is left, too few for the next.
        TestApp app = new TestApp().filter("costly", "/*", "limit", "3/1m", "cost", "2", "headers", "both");
        try (var running = container.start(app)) {
            HttpResponse<String> first = get(running.uri("/x"));
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(header(first, "RateLimit-Remaining")).isEqualTo("1");

            HttpResponse<String> second = get(running.uri("/x"));
            assertThat(second.statusCode()).isEqualTo(429);
            assertThat(header(second, "RateLimit-Remaining")).isEqualTo("0");
            assertThat(header(second, "RateLimit")).startsWith("\"costly\";r=0;");
            // One more unit arrives 20 s after the first request.
            assertThat(header(second, "Retry-After")).isEqualTo("20");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void tIsTheTimeUntilOneMoreUnitAndEqualsRetryAfterOnA429(Container container) throws Exception {
        TestApp app = new TestApp()
                .filter("five", "/five/*", "limit", "5/10s", "headers", "both")
                .filter("window", "/window/*", "limit", "2/1m", "algorithm", "sliding-log", "headers", "draft-10");
        try (var running = container.start(app)) {
            HttpResponse<String> third = null;
            for (int i = 0; i < 3; i++) {
                third = get(running.uri("/five/x"));
            }
            // 3 of 5 spent on a 5/10s bucket: one more unit in 2 s (the whole budget only in 6 s)
            assertThat(header(third, "RateLimit")).isEqualTo("\"five\";r=2;t=2");
            assertThat(header(third, "RateLimit-Reset")).isEqualTo("2");
            get(running.uri("/five/x"));
            get(running.uri("/five/x"));
            HttpResponse<String> refused = get(running.uri("/five/x"));
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(header(refused, "Retry-After")).isEqualTo("2");
            assertThat(header(refused, "RateLimit")).isEqualTo("\"five\";r=0;t=2");
            assertThat(header(refused, "RateLimit-Reset")).isEqualTo("2");

            get(running.uri("/window/x"));
            HttpResponse<String> full = get(running.uri("/window/x"));
            assertThat(header(full, "RateLimit")).isEqualTo("\"window\";r=0;t=60");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void subSecondPeriodsArePublishedAtTheirRealRate(Container container) throws Exception {
        TestApp app = new TestApp().filter("fast", "/*", "limit", "20/500ms", "headers", "draft");
        try (var running = container.start(app)) {
            assertThat(header(get(running.uri("/x")), "RateLimit-Policy")).isEqualTo("\"fast\";q=40;w=1");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void stackedFiltersListEveryPolicyAndTheLegacyHeadersReportTheBindingOne(Container container) throws Exception {
        TestApp app = new TestApp()
                .filter("outer", "/*", "limit", "100/1m", "headers", "both", "algorithm", "fixed-window")
                .filter("inner", "/api/*", "limit", "2/1m", "headers", "both");
        try (var running = container.start(app)) {
            HttpResponse<String> first = get(running.uri("/api/x"));
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(header(first, "RateLimit-Policy")).isEqualTo("\"outer\";q=100;w=60, \"inner\";q=2;w=60");
            assertThat(header(first, "RateLimit")).matches("\"outer\";r=99;t=\\d+, \"inner\";r=1;t=30");
            assertThat(header(first, "RateLimit-Limit")).isEqualTo("2");
            assertThat(header(first, "RateLimit-Remaining")).isEqualTo("1");
            assertThat(header(first, "RateLimit-Reset")).isEqualTo("30");

            get(running.uri("/api/x"));
            HttpResponse<String> refused = get(running.uri("/api/x"));
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(header(refused, "RateLimit")).matches("\"outer\";r=97;t=\\d+, \"inner\";r=0;t=30");
            assertThat(header(refused, "RateLimit-Limit")).isEqualTo("2");
            assertThat(header(refused, "RateLimit-Remaining")).isEqualTo("0");
            assertThat(header(refused, "Retry-After")).isEqualTo("30");

            // only the outer layer applies here
            HttpResponse<String> outerOnly = get(running.uri("/other"));
            assertThat(header(outerOnly, "RateLimit")).matches("\"outer\";r=96;t=\\d+");
            assertThat(header(outerOnly, "RateLimit-Limit")).isEqualTo("100");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void draftRejectionsUseTheQuotaExceededProblemType(Container container) throws Exception {
        TestApp app = new TestApp()
                .filter("draft", "/draft/*", "limit", "1/1m", "headers", "draft-10")
                .filter("legacy", "/legacy/*", "limit", "1/1m");
        try (var running = container.start(app)) {
            get(running.uri("/draft/x"));
            Map<String, Object> draft = Http.json(get(running.uri("/draft/x")));
            assertThat(draft).containsEntry("type", "https://iana.org/assignments/http-problem-types#quota-exceeded")
                    .containsEntry("title", "Quota Exceeded").containsEntry("status", 429L);
            assertThat((Object[]) draft.get("violated-policies")).containsExactly("draft");

            get(running.uri("/legacy/x"));
            Map<String, Object> legacy = Http.json(get(running.uri("/legacy/x")));
            assertThat(legacy).containsEntry("type", "about:blank").doesNotContainKey("violated-policies");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void partitionKeyIsAKeyedHashOfTheCallerWhenAskedFor(Container container) throws Exception {
        TestApp app = new TestApp()
                .filter("keyed", "/keyed/*", "limit", "5/1m", "headers", "draft", "partition-key", "true",
                        "key", "header:X-API-Key")
                .filter("plain", "/plain/*", "limit", "5/1m", "headers", "draft");
        try (var running = container.start(app)) {
            HttpResponse<String> alice = get(running.uri("/keyed/x"), "X-API-Key", "alice");
            String pk = header(alice, "RateLimit").replaceAll(".*;pk=", "");
            assertThat(pk).matches(":[A-Za-z0-9+/]{16}:");
            assertThat(header(alice, "RateLimit-Policy")).isEqualTo("\"keyed\";q=5;w=60;pk=" + pk);
            assertThat(header(get(running.uri("/keyed/x"), "X-API-Key", "alice"), "RateLimit")).endsWith(";pk=" + pk);
            assertThat(header(get(running.uri("/keyed/x"), "X-API-Key", "bob"), "RateLimit")).doesNotEndWith(pk)
                    .contains(";pk=:");
            assertThat(header(get(running.uri("/plain/x")), "RateLimit")).doesNotContain("pk=");
        }
    }
}
