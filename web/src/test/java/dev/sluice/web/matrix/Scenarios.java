package dev.sluice.web.matrix;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static dev.sluice.web.matrix.Target.caller;
import static dev.sluice.web.matrix.Target.header;
import static dev.sluice.web.matrix.Target.json;
import static org.assertj.core.api.Assertions.assertThat;

/** The scenarios of the {@link AdapterMatrix}: what any adapter answers over HTTP, on any store. */
final class Scenarios {

    private static final String[] RATE_LIMIT_HEADERS = {"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
        "RateLimit-Policy", "RateLimit"};

    /** A scenario's body: the requests and their assertions against one adapter and store. */
    interface Check {
        void run(Target target) throws Exception;
    }

    /** A named scenario. */
    record Scenario(String name, Check check) {
    }

    static final List<Scenario> ALL = List.of(
            new Scenario("eachCallerCountsDownThenIsRefusedWithA429Problem", Scenarios::countDownThenRefuse),
            new Scenario("headerStylesWriteExactValues", Scenarios::headerStyles),
            new Scenario("rejectionIs429WithRetryAfterHeadersAndProblemBody", Scenarios::rejection),
            new Scenario("rejectionReportsRemainingZeroEvenWhenUnitsAreLeft", Scenarios::remainingZero),
            new Scenario("draftRejectionsUseTheQuotaExceededProblemType", Scenarios::draftProblemType));

    private Scenarios() {
    }

    private static void countDownThenRefuse(Target target) {
        String me = caller();
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> ok = target.get("legacy", Routes.THREE, me);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("ok");
            assertThat(header(ok, "RateLimit-Limit")).isEqualTo("3");
            assertThat(header(ok, "RateLimit-Remaining")).isEqualTo(Integer.toString(3 - i));
            assertThat(Long.parseLong(header(ok, "RateLimit-Reset"))).isBetween(1L, 60L);
        }
        HttpResponse<String> rejected = target.get("legacy", Routes.THREE, me);
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(header(rejected, "Content-Type")).startsWith("application/problem+json");
        assertThat(rejected.body()).contains("\"status\":429").contains("\"title\":\"Too Many Requests\"")
                .contains("\"policy\":\"three\"");
        assertThat(Long.parseLong(header(rejected, "Retry-After"))).isBetween(1L, 20L);
        assertThat(header(rejected, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(rejected, "RateLimit-Limit")).isEqualTo("3");

        // Another caller has its own budget.
        assertThat(target.get("legacy", Routes.THREE, caller()).statusCode()).isEqualTo(200);
    }

    private static void headerStyles(Target target) {
        // 5 per minute: one token every 12 s, so one spent request is fully restored in 12 s.
        HttpResponse<String> legacy = target.get("legacy", Routes.FIVE, caller());
        assertThat(legacy.statusCode()).isEqualTo(200);
        assertThat(legacy.body()).isEqualTo("ok");
        assertThat(header(legacy, "RateLimit-Limit")).isEqualTo("5");
        assertThat(header(legacy, "RateLimit-Remaining")).isEqualTo("4");
        assertThat(header(legacy, "RateLimit-Reset")).isEqualTo("12");
        assertThat(header(legacy, "RateLimit-Policy")).isNull();
        assertThat(header(legacy, "RateLimit")).isNull();

        HttpResponse<String> draft = target.get("draft", Routes.FIVE, caller());
        assertThat(draft.statusCode()).isEqualTo(200);
        assertThat(header(draft, "RateLimit-Policy")).isEqualTo("\"api.v2\";q=5;w=60");
        assertThat(header(draft, "RateLimit")).isEqualTo("\"api.v2\";r=4;t=12");
        assertThat(header(draft, "RateLimit-Limit")).isNull();
        assertThat(header(draft, "RateLimit-Remaining")).isNull();

        String both = caller();
        target.get("both", Routes.FIVE, both);
        HttpResponse<String> second = target.get("both", Routes.FIVE, both);
        assertThat(header(second, "RateLimit-Limit")).isEqualTo("5");
        assertThat(header(second, "RateLimit-Remaining")).isEqualTo("3");
        // two spent: the next of them is back in 12 s (the whole budget in 24 s)
        assertThat(header(second, "RateLimit-Reset")).isEqualTo("12");
        assertThat(header(second, "RateLimit-Policy")).isEqualTo("\"api.v2\";q=5;w=60");
        assertThat(header(second, "RateLimit")).isEqualTo("\"api.v2\";r=3;t=12");

        HttpResponse<String> none = target.get("none", Routes.FIVE, caller());
        assertThat(none.statusCode()).isEqualTo(200);
        for (String name : RATE_LIMIT_HEADERS) {
            assertThat(header(none, name)).as(name).isNull();
        }
    }

    private static void rejection(Target target) {
        String me = caller();
        assertThat(target.get("both", Routes.ONE, me).statusCode()).isEqualTo(200);

        HttpResponse<String> rejected = target.get("both", Routes.ONE, me);
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(header(rejected, "Retry-After")).isEqualTo("60");
        assertThat(header(rejected, "RateLimit-Limit")).isEqualTo("1");
        assertThat(header(rejected, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(rejected, "RateLimit-Reset")).isEqualTo("60");
        assertThat(header(rejected, "RateLimit")).isEqualTo("\"one\";r=0;t=60");
        assertThat(header(rejected, "Content-Type")).startsWith("application/problem+json");
        Map<String, Object> problem = json(rejected);
        assertThat(problem).containsEntry("type", "about:blank").containsEntry("title", "Too Many Requests")
                .containsEntry("status", 429L).containsEntry("policy", "one");
        assertThat((String) problem.get("detail")).contains("retry after 60 s");
        assertThat(rejected.body()).doesNotContain("ok");
    }

    private static void remainingZero(Target target) {
        // 3 per minute, 2 per request: after one request 1 unit is left, too few for the next.
        String me = caller();
        HttpResponse<String> first = target.get("both", Routes.COSTLY, me);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(header(first, "RateLimit-Remaining")).isEqualTo("1");

        HttpResponse<String> second = target.get("both", Routes.COSTLY, me);
        assertThat(second.statusCode()).isEqualTo(429);
        assertThat(header(second, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(second, "RateLimit")).startsWith("\"costly\";r=0;");
        // One more unit arrives 20 s after the first request.
        assertThat(header(second, "Retry-After")).isEqualTo("20");
    }

    private static void draftProblemType(Target target) {
        String me = caller();
        target.get("draft-10", Routes.ONE, me);
        Map<String, Object> draft = json(target.get("draft-10", Routes.ONE, me));
        assertThat(draft).containsEntry("type", "https://iana.org/assignments/http-problem-types#quota-exceeded")
                .containsEntry("title", "Quota Exceeded").containsEntry("status", 429L);
        assertThat((Object[]) draft.get("violated-policies")).containsExactly("one");

        target.get("legacy", Routes.ONE, me);
        Map<String, Object> legacy = json(target.get("legacy", Routes.ONE, me));
        assertThat(legacy).containsEntry("type", "about:blank").doesNotContainKey("violated-policies");
    }
}
