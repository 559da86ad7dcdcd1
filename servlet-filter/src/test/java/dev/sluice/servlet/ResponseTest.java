package dev.sluice.servlet;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.http.HttpResponse;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the filter writes beyond the adapter matrix ({@code ServletMatrixTest}): the draft's {@code t}, sub-second
 * periods, stacked filters and partition keys.
 */
class ResponseTest {

    static Iterable<Container> containers() {
        return Container.selected();
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
