package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.Decision;
import dev.sluice.Limit;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitHeadersTest {

    private static final Limit SECOND = Limit.of("api", "10/s");
    private static final Limit HOUR = Limit.of("api-hourly", "1000/1h");

    /** A layer as a guard of the decision's limits makes it. */
    private static Layers.Layer layer(Decision decision, String partitionKey) {
        return new Layers.Layer(decision, partitionKey,
                RateLimitHeaders.windows(decision.quotas().stream().map(Decision.Quota::limit).toList()));
    }

    private static Map<String, String> headers(Decision decision, HeaderStyle style) {
        Map<String, String> headers = new LinkedHashMap<>();
        RateLimitHeaders.write(List.of(layer(decision, null)), style, headers::put);
        return headers;
    }

    private static RateLimitHeaders.QuotaWindow quotaAndWindow(Limit limit) {
        return RateLimitHeaders.QuotaWindow.of(limit);
    }

    private static RateLimitHeaders.QuotaWindow qw(long quota, long window) {
        return new RateLimitHeaders.QuotaWindow(quota, window);
    }

    private final Decision rejected = new Decision(Decision.Outcome.REJECTED, List.of(
            new Decision.Quota(SECOND, false, 0, Duration.ofMillis(900), Duration.ofMillis(100)),
            new Decision.Quota(HOUR, true, 412, Duration.ofSeconds(2_000), Duration.ZERO)), Duration.ofMillis(100));

    @Test
    void legacyHeadersDescribeTheBindingLimitInWholeSecondsRoundedUp() {
        assertThat(headers(rejected, HeaderStyle.LEGACY)).containsExactly(
                Map.entry("RateLimit-Limit", "10"), Map.entry("RateLimit-Remaining", "0"),
                Map.entry("RateLimit-Reset", "1"));
        assertThat(RateLimitHeaders.retryAfterSeconds(rejected)).isEqualTo(1);
    }

    @Test
    void draftHeadersListEveryPolicy() {
        assertThat(headers(rejected, HeaderStyle.DRAFT)).containsExactly(
                Map.entry("RateLimit-Policy", "\"api\";q=10;w=1, \"api-hourly\";q=1000;w=3600"),
                Map.entry("RateLimit", "\"api\";r=0;t=1, \"api-hourly\";r=412;t=2000"));
        assertThat(headers(rejected, HeaderStyle.BOTH)).hasSize(5);
        assertThat(headers(rejected, HeaderStyle.NONE)).isEmpty();
    }

    @Test
    void aBucketReportsItsSizeAsTheLimitAndTheTimeToGrantItAsTheWindow() {
        Limit bucket = Limit.of("bucket", "1/s").withBurst(5);
        Decision allowed = new Decision(Decision.Outcome.ALLOWED, List.of(
                new Decision.Quota(bucket, true, 4, Duration.ofSeconds(1), Duration.ZERO)), Duration.ZERO);
        assertThat(headers(allowed, HeaderStyle.BOTH)).containsEntry("RateLimit-Limit", "5")
                .containsEntry("RateLimit-Remaining", "4")
                .containsEntry("RateLimit-Policy", "\"bucket\";q=5;w=5")
                .containsEntry("RateLimit", "\"bucket\";r=4;t=1");
        assertThat(allowed.capacity()).isEqualTo(5);
    }

    @Test
    void tIsTheTimeUntilOneMoreUnitAndTheRefusingLimitsWaitOnA429() {
        Limit five = Limit.of("five", "5/10s");
        // 3 of 5 spent: one more unit in 2 s, the whole budget in 6 s
        Decision allowed = new Decision(Decision.Outcome.ALLOWED, List.of(new Decision.Quota(five, true, 2,
                Duration.ofSeconds(6), Duration.ZERO, Duration.ofSeconds(2))), Duration.ZERO);
        assertThat(headers(allowed, HeaderStyle.BOTH)).containsEntry("RateLimit", "\"five\";r=2;t=2")
                .containsEntry("RateLimit-Reset", "2");
        Decision refused = new Decision(Decision.Outcome.REJECTED, List.of(new Decision.Quota(five, false, 0,
                Duration.ofSeconds(10), Duration.ofMillis(1_500), Duration.ofMillis(1_500))), Duration.ofMillis(1_500));
        assertThat(headers(refused, HeaderStyle.BOTH)).containsEntry("RateLimit", "\"five\";r=0;t=2")
                .containsEntry("RateLimit-Reset", "2");
        assertThat(RateLimitHeaders.retryAfterSeconds(refused)).isEqualTo(2);
    }

    @Test
    void subSecondPeriodsArePublishedAsTheSameRateOverWholeSeconds() {
        assertThat(quotaAndWindow(Limit.of("a", "20/500ms"))).isEqualTo(qw(40, 1));
        assertThat(quotaAndWindow(Limit.of("a", "3/1500ms"))).isEqualTo(qw(6, 3));
        assertThat(quotaAndWindow(Limit.of("a", "10/s"))).isEqualTo(qw(10, 1));
        assertThat(quotaAndWindow(Limit.of("a", "100/1m"))).isEqualTo(qw(100, 60));
        assertThat(quotaAndWindow(Limit.of("a", "1/s").withBurst(5))).isEqualTo(qw(5, 5));
        // a burst of 5 at 10/s fills in half a second: the rate over one second
        assertThat(quotaAndWindow(Limit.of("a", "10/s").withBurst(5))).isEqualTo(qw(10, 1));
        // 3 per 7 s with a burst of 5 fills in 11.7 s: 6 per 14 s
        assertThat(quotaAndWindow(Limit.of("a", "3/7s").withBurst(5))).isEqualTo(qw(6, 14));
    }

    @Test
    void layersAreListedTogetherAndTheLegacyHeadersReportTheBindingLimitOfAll() {
        Limit outer = Limit.of("outer", "100/1m");
        Limit inner = Limit.of("inner", "10/1m");
        Decision first = new Decision(Decision.Outcome.ALLOWED, List.of(new Decision.Quota(outer, true, 97,
                Duration.ofSeconds(2), Duration.ZERO, Duration.ofMillis(600))), Duration.ZERO);
        Decision second = new Decision(Decision.Outcome.ALLOWED, List.of(new Decision.Quota(inner, true, 3,
                Duration.ofSeconds(42), Duration.ZERO, Duration.ofSeconds(6))), Duration.ZERO);
        Map<String, String> headers = new LinkedHashMap<>();
        RateLimitHeaders.write(List.of(layer(first, ":AAAA:"), layer(second, null)), HeaderStyle.BOTH, headers::put);
        assertThat(headers).containsEntry("RateLimit-Limit", "10").containsEntry("RateLimit-Remaining", "3")
                .containsEntry("RateLimit-Reset", "6")
                .containsEntry("RateLimit-Policy", "\"outer\";q=100;w=60;pk=:AAAA:, \"inner\";q=10;w=60")
                .containsEntry("RateLimit", "\"outer\";r=97;t=1;pk=:AAAA:, \"inner\";r=3;t=6");
    }

    @Test
    void partitionKeysAreShortKeyedByteSequences() {
        String pk = PartitionKeys.of("ip:192.0.2.1");
        assertThat(pk).matches(":[A-Za-z0-9+/]{16}:").isEqualTo(PartitionKeys.of("ip:192.0.2.1"))
                .isNotEqualTo(PartitionKeys.of("ip:192.0.2.2"));
        // not a plain hash of the caller
        assertThat(pk.substring(1, 17))
                .isNotEqualTo(java.util.Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(
                sha256("ip:192.0.2.1"), 12)));
    }

    private static byte[] sha256(String s) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256")
                    .digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void draftProblemBodiesUseQuotaExceededListingEveryRefusingPolicy() {
        Limit daily = Limit.of("daily", "1000/1d");
        Decision twoRefused = new Decision(Decision.Outcome.REJECTED, List.of(
                new Decision.Quota(SECOND, false, 0, Duration.ofMillis(900), Duration.ofMillis(100)),
                new Decision.Quota(HOUR, true, 412, Duration.ofSeconds(2_000), Duration.ZERO),
                new Decision.Quota(daily, false, 0, Duration.ofHours(3), Duration.ofSeconds(90))),
                Duration.ofSeconds(90));
        assertThat(Problems.tooManyRequests(twoRefused, HeaderStyle.DRAFT)).isEqualTo("{\"type\":"
                + "\"https://iana.org/assignments/http-problem-types#quota-exceeded\",\"title\":\"Quota Exceeded\","
                + "\"status\":429,\"detail\":\"Rate limit exceeded for policy 'daily'; retry after 90 s.\","
                + "\"policy\":\"daily\",\"violated-policies\":[\"api\",\"daily\"]}");
        assertThat(Problems.tooManyRequests(twoRefused, HeaderStyle.BOTH)).startsWith("{\"type\":\"about:blank\"");
        assertThat(Problems.tooManyRequests(twoRefused, HeaderStyle.LEGACY))
                .startsWith("{\"type\":\"about:blank\"").doesNotContain("violated-policies");
    }

    @Test
    void policyNamesThatAreNotTokensAreWarnedOfInDraftModeOnly() {
        java.io.PrintStream original = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            RateLimitHeaders.warnOfNonTokenPolicies(List.of(Limit.of("1st", "1/s"), Limit.of("_x", "1/s"),
                    Limit.of("fine", "1/s")), HeaderStyle.DRAFT, "filter 'f'");
            RateLimitHeaders.warnOfNonTokenPolicies(List.of(Limit.of("2nd", "1/s")), HeaderStyle.LEGACY, "filter 'g'");
        } finally {
            System.setErr(original);
        }
        String log = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertThat(log).contains("WARN").contains("filter 'f': policy name '1st'").contains("policy name '_x'")
                .doesNotContain("'fine'").doesNotContain("2nd");
    }

    @Test
    void failedDecisionsCarryNoRateLimitHeaders() {
        Decision failed = new Decision(Decision.Outcome.FAILED_OPEN, List.of(), Duration.ZERO);
        assertThat(headers(failed, HeaderStyle.BOTH)).isEmpty();
    }

    @Test
    void problemBodiesFollowRfc9457() {
        assertThat(Problems.tooManyRequests(rejected))
                .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\","
                + "\"status\":429,\"detail\":\"Rate limit exceeded for policy 'api'; retry after 1 "
                + "s.\",\"policy\":\"api\"}");
        assertThat(Problems.SERVICE_UNAVAILABLE).contains("\"status\":503");
    }
}
