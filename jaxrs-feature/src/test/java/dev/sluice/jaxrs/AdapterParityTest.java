package dev.sluice.jaxrs;

import dev.sluice.jaxrs.ParityApps.App;
import dev.sluice.jaxrs.ParityApps.Route;
import dev.sluice.jaxrs.ParityApps.Side;
import dev.sluice.testing.TestRedis;
import org.eclipse.jetty.util.ajax.JSON;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Stream;

import static dev.sluice.jaxrs.ParityApps.ATTRIBUTE;
import static dev.sluice.jaxrs.ParityApps.BASIC;
import static dev.sluice.jaxrs.ParityApps.CLOSED;
import static dev.sluice.jaxrs.ParityApps.COMPOSITE;
import static dev.sluice.jaxrs.ParityApps.COST;
import static dev.sluice.jaxrs.ParityApps.GET_ONLY;
import static dev.sluice.jaxrs.ParityApps.OPEN;
import static dev.sluice.jaxrs.ParityApps.POST_ONLY;
import static dev.sluice.jaxrs.ParityApps.REPEATED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * One HTTP contract, two adapters: each scenario sends the same requests through
 * {@code RateLimitFilter} (init-params) and through {@code RateLimitFeature} ({@code @RateLimit}
 * and {@code sluice.*} properties), on the same store type, and the answers must agree in status,
 * {@code Retry-After}, every {@code RateLimit*} header, and for refusals the content type and the
 * problem body (parsed; both routes name the same explicit policy, so no field may differ). Each
 * scenario also states the statuses and the header names it expects, so that two adapters broken
 * alike do not pass.
 *
 * <p>Left out, because the adapters differ there today: a request refused by one of two limits.
 * Repeated {@code @RateLimit}s are decided together, so the 429 lists both limits and a refusal
 * spends neither; two filters decide one after the other, so when the first refuses, the second
 * never runs and the 429 lists the first alone, and when the second refuses, the first has
 * already spent a unit ({@code "wide";r=2} where the feature answers {@code r=3}).
 */
class AdapterParityTest {

    private static final Set<String> LEGACY = Set.of("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset");
    private static final Set<String> DRAFT = Set.of("ratelimit", "ratelimit-policy");
    private static final Set<String> BOTH = Set.of("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset",
            "ratelimit", "ratelimit-policy");

    private static final List<App> APPS = new ArrayList<>();
    private static Side filters;
    private static Side jersey;

    /** Requests of one route of one app, and what the first answer and all the statuses must be. */
    record Scenario(App app, Route route, List<Integer> statuses, Set<String> firstHeaders) {
        @Override
        public String toString() {
            return app.name() + "/" + route.name() + " " + statuses;
        }
    }

    @BeforeAll
    static void start() throws Exception {
        String down = "redis://127.0.0.1:" + TestRedis.freePort();
        for (String store : List.of("memory", TestRedis.shared().url())) {
            String name = store.equals("memory") ? "memory" : "redis";
            // A live Redis: a generous timeout, so that a busy machine never fails a decision open.
            String timeout = store.equals("memory") ? "100ms" : "2s";
            for (String headers : List.of("legacy", "draft-10", "both", "none")) {
                APPS.add(new App(headers + "-" + name, headers, store, timeout));
            }
        }
        APPS.add(new App("down", "both", down, "200ms"));
        // The application writes refusals: an error page behind the filters, a mapper behind the feature.
        APPS.add(new App("application-memory", "both", "memory", "100ms",
                Map.of("reject", ParityApps.APPLICATION_REJECT)));
        APPS.add(new App("application-down", "both", down, "200ms", Map.of("reject", ParityApps.APPLICATION_REJECT)));
        // The tests' client (127.0.0.1, or ::1) is exempt: never limited, never counted, no headers.
        APPS.add(new App("exempt-memory", "both", "memory", "100ms", Map.of("exempt", "127.0.0.0/8, ::1")));
        APPS.add(new App("exempt-redis", "both", TestRedis.shared().url(), "2s", Map.of("exempt", "127.0.0.0/8, ::1")));
        filters = ParityApps.filters(APPS);
        jersey = ParityApps.jersey(APPS);
        // Warm every application up on a route that counts nothing (GET passes methods=POST,PUT), so
        // that a slow first request of one side does not shift the clock between the two sides'
        // answers of the first scenario (a reset one second apart).
        for (App app : APPS) {
            filters.get(app, POST_ONLY, "warm-up");
            jersey.get(app, POST_ONLY, "warm-up");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        try (Side one = filters; Side two = jersey) {
            // closes both
        }
    }

    private static App app(String name) {
        return APPS.stream().filter(a -> a.name().equals(name)).findFirst().orElseThrow();
    }

    static List<Scenario> scenarios() {
        List<Scenario> table = new ArrayList<>();
        List<Integer> threeThen429 = List.of(200, 200, 200, 429);
        for (String store : List.of("memory", "redis")) {
            table.add(new Scenario(app("legacy-" + store), BASIC, threeThen429, LEGACY));
            table.add(new Scenario(app("draft-10-" + store), BASIC, threeThen429, DRAFT));
            table.add(new Scenario(app("both-" + store), BASIC, threeThen429, BOTH));
            table.add(new Scenario(app("none-" + store), BASIC, threeThen429, Set.of()));
            // 5 a minute at 2 a request: 3 left, 1 left (too few), refused
            table.add(new Scenario(app("both-" + store), COST, List.of(200, 200, 429), BOTH));
            table.add(new Scenario(app("draft-10-" + store), COST, List.of(200, 200, 429), DRAFT));
            // @RateLimit repeated vs two filters, within the budget only: refused, they differ
            // (see the class comment)
            table.add(new Scenario(app("both-" + store), REPEATED, List.of(200, 200), BOTH));
            table.add(new Scenario(app("draft-10-" + store), REPEATED, List.of(200, 200), DRAFT));
            // Composite keys, methods and exemptions
            table.add(new Scenario(app("both-" + store), COMPOSITE, threeThen429, BOTH));
            table.add(new Scenario(app("draft-10-" + store), COMPOSITE, threeThen429, DRAFT));
            table.add(new Scenario(app("both-" + store), POST_ONLY, List.of(200, 200, 200, 200, 200), Set.of()));
            table.add(new Scenario(app("both-" + store), GET_ONLY, threeThen429, BOTH));
            table.add(new Scenario(app("exempt-" + store), BASIC, List.of(200, 200, 200, 200, 200), Set.of()));
            table.add(new Scenario(app("exempt-" + store), GET_ONLY, List.of(200, 200, 200, 200, 200), Set.of()));
            // The caller keyed by a request attribute the application set
            table.add(new Scenario(app("both-" + store), ATTRIBUTE, threeThen429, BOTH));
            table.add(new Scenario(app("draft-10-" + store), ATTRIBUTE, threeThen429, DRAFT));
        }
        // Refusals the application writes, with Sluice's headers
        table.add(new Scenario(app("application-memory"), BASIC, threeThen429, BOTH));
        table.add(new Scenario(app("application-memory"), REPEATED, List.of(200, 200), BOTH));
        table.add(new Scenario(app("application-down"), CLOSED, List.of(503, 503), Set.of()));
        // Nothing listens on the store's port.
        table.add(new Scenario(app("down"), CLOSED, List.of(503, 503), Set.of()));
        table.add(new Scenario(app("down"), OPEN, List.of(200, 200), Set.of()));
        return table;
    }

    @TestFactory
    Stream<DynamicTest> bothAdaptersAnswerEveryScenarioAlike() {
        return scenarios().stream().map(s -> DynamicTest.dynamicTest(s.toString(), () -> run(s)));
    }

    private static void run(Scenario scenario) {
        // A caller of its own per side: on a shared Redis the two sides must not share a budget.
        String viaFilter = UUID.randomUUID().toString();
        String viaFeature = UUID.randomUUID().toString();
        for (int i = 0; i < scenario.statuses().size(); i++) {
            HttpResponse<String> filter = filters.get(scenario.app(), scenario.route(), viaFilter);
            HttpResponse<String> feature = jersey.get(scenario.app(), scenario.route(), viaFeature);
            String request = scenario + ", request " + (i + 1);
            assertThat(filter.statusCode()).as("%s: status via the filter", request)
                    .isEqualTo(scenario.statuses().get(i));
            if (i == 0) {
                assertThat(rateLimitHeaders(filter).keySet()).as("%s: headers via the filter", request)
                        .isEqualTo(scenario.firstHeaders());
            }
            assertThat(answer(feature)).as("%s: the feature's answer (expected: the filter's)", request)
                    .isEqualTo(answer(filter));
        }
    }

    /** What both adapters must agree on: status, Retry-After, the RateLimit* headers, the body. */
    private static Map<String, Object> answer(HttpResponse<String> response) {
        Map<String, Object> answer = new TreeMap<>();
        answer.put("status", response.statusCode());
        answer.put("retry-after", response.headers().allValues("Retry-After"));
        answer.put("headers", rateLimitHeaders(response));
        if (response.statusCode() == 200) {
            answer.put("body", response.body());
        } else {
            answer.put("content-type", response.headers().allValues("Content-Type"));
            answer.put("body", problem(response));
        }
        return answer;
    }

    /** Every header whose name starts with {@code RateLimit}, by lower-case name, with all its values. */
    private static Map<String, List<String>> rateLimitHeaders(HttpResponse<?> response) {
        Map<String, List<String>> headers = new TreeMap<>();
        response.headers().map().forEach((name, values) -> {
            String lower = name.toLowerCase(Locale.ROOT);
            if (lower.startsWith("ratelimit")) {
                headers.merge(lower, List.copyOf(values), (a, b) -> Stream.concat(a.stream(), b.stream()).toList());
            }
        });
        return headers;
    }

    /** The problem body as a JSON object; arrays become lists, so that equal bodies compare equal. */
    private static Object problem(HttpResponse<String> response) {
        Object parsed = new JSON().fromJSON(response.body());
        assertThat(parsed).as("a JSON object: %s", response.body()).isInstanceOf(Map.class);
        return normalised(parsed);
    }

    private static Object normalised(Object json) {
        if (json instanceof Map<?, ?> map) {
            Map<Object, Object> copy = new TreeMap<>();
            map.forEach((k, v) -> copy.put(k, normalised(v)));
            return copy;
        }
        if (json instanceof Object[] array) {
            return Stream.of(array).map(AdapterParityTest::normalised).toList();
        }
        return json;
    }
}
