package dev.sluice.servlet;

import jakarta.servlet.DispatcherType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.http.HttpResponse;
import java.util.EnumSet;
import java.util.List;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

/** Several filters in one application: independent budgets, and one charge per request per filter. */
class PoliciesTest {

    static Iterable<Container> containers() {
        return Container.selected();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void policiesOnDifferentRoutesHaveIndependentBudgets(Container container) throws Exception {
        TestApp app = new TestApp()
                .filter("search", "/search/*", "limit", "2/1m")
                .filter("orders", "/orders/*", "limit", "3/1m", "algorithm", "fixed-window");
        try (var running = container.start(app)) {
            assertThat(get(running.uri("/search/a")).statusCode()).isEqualTo(200);
            assertThat(get(running.uri("/search/b")).statusCode()).isEqualTo(200);
            assertThat(get(running.uri("/search/c")).statusCode()).isEqualTo(429);

            for (int i = 0; i < 3; i++) {
                HttpResponse<String> order = get(running.uri("/orders/" + i));
                assertThat(order.statusCode()).isEqualTo(200);
                assertThat(header(order, "RateLimit-Remaining")).isEqualTo(Integer.toString(2 - i));
            }
            assertThat(get(running.uri("/orders/4")).statusCode()).isEqualTo(429);
            // A route without a filter is never limited.
            assertThat(get(running.uri("/free")).statusCode()).isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void twoFiltersOnOneRouteEachChargeTheirOwnPolicy(Container container) throws Exception {
        TestApp app = new TestApp()
                .filter("wide", "/*", "limit", "5/1m", "headers", "draft")
                .filter("narrow", "/api/*", "limit", "2/1m", "headers", "draft");
        try (var running = container.start(app)) {
            assertThat(get(running.uri("/api/x")).statusCode()).isEqualTo(200);
            HttpResponse<String> second = get(running.uri("/api/x"));
            // Both layers are listed: wide (5/1m, 2 spent, one back in 12 s), narrow (2/1m, one back in 30 s).
            assertThat(header(second, "RateLimit")).isEqualTo("\"wide\";r=3;t=12, \"narrow\";r=0;t=30");
            assertThat(header(second, "RateLimit-Policy")).isEqualTo("\"wide\";q=5;w=60, \"narrow\";q=2;w=60");
            HttpResponse<String> third = get(running.uri("/api/x"));
            assertThat(third.statusCode()).isEqualTo(429);
            assertThat(Http.json(third)).containsEntry("policy", "narrow");
            // wide was charged 3 times (including the request narrow rejected).
            HttpResponse<String> other = get(running.uri("/other"));
            assertThat(header(other, "RateLimit")).startsWith("\"wide\";r=1;");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void policyDefaultsToTheFilterNameMadeValid(Container container) throws Exception {
        TestApp app = new TestApp().filter("Search API (v2)", "/*", "limit", "10/s", "headers", "draft");
        try (var running = container.start(app)) {
            HttpResponse<String> response = get(running.uri("/x"));
            assertThat(header(response, "RateLimit-Policy")).isEqualTo("\"Search-API--v2-\";q=10;w=1");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aRequestIsChargedOnceWhateverItsDispatches(Container container) throws Exception {
        TestApp app = new TestApp().filter("once", List.of("/*"), EnumSet.allOf(DispatcherType.class),
                "limit", "10/1m");
        try (var running = container.start(app)) {
            HttpResponse<String> forward = get(running.uri("/forward"));
            assertThat(forward.statusCode()).isEqualTo(200);
            assertThat(forward.body()).isEqualTo("target");
            assertThat(header(forward, "RateLimit-Remaining")).isEqualTo("9");

            HttpResponse<String> include = get(running.uri("/include"));
            assertThat(include.statusCode()).isEqualTo(200);
            assertThat(include.body()).isEqualTo("including target");
            assertThat(header(include, "RateLimit-Remaining")).isEqualTo("8");

            HttpResponse<String> error = get(running.uri("/fail"));
            assertThat(error.statusCode()).isEqualTo(500);
            assertThat(error.body()).isEqualTo("target"); // the error page ran, through the filter

            HttpResponse<String> async = get(running.uri("/async"));
            assertThat(async.statusCode()).isEqualTo(200);
            assertThat(async.body()).isEqualTo("target");

            // Four requests, each dispatched twice, cost four units: 10 - 4 - 1 = 5 left now.
            HttpResponse<String> plain = get(running.uri("/plain"));
            assertThat(header(plain, "RateLimit-Remaining")).isEqualTo("5");
        }
    }
}
