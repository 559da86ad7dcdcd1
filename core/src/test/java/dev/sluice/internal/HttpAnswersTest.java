package dev.sluice.internal;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.SluiceConfig.HeaderStyle;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class HttpAnswersTest {

    private static final Limit SECOND = Limit.of("api", "10/s");
    private static final Limit HOUR = Limit.of("api-hourly", "1000/1h");

    private static Map<String, String> headers(Decision decision, HeaderStyle style) {
        Map<String, String> headers = new LinkedHashMap<>();
        HttpAnswers.writeHeaders(decision, style, headers::put);
        return headers;
    }

    private final Decision rejected = new Decision(Decision.Outcome.REJECTED, List.of(
            new Decision.Quota(SECOND, false, 0, Duration.ofMillis(900), Duration.ofMillis(100)),
            new Decision.Quota(HOUR, true, 412, Duration.ofSeconds(2_000), Duration.ZERO)), Duration.ofMillis(100));

    @Test
    void legacyHeadersDescribeTheBindingLimitInWholeSecondsRoundedUp() {
        assertThat(headers(rejected, HeaderStyle.LEGACY)).containsExactly(
                Map.entry("RateLimit-Limit", "10"), Map.entry("RateLimit-Remaining", "0"), Map.entry("RateLimit-Reset", "1"));
        assertThat(HttpAnswers.retryAfterSeconds(rejected)).isEqualTo(1);
    }

    @Test
    void draftHeadersListEveryPolicy() {
        assertThat(headers(rejected, HeaderStyle.DRAFT)).containsExactly(
                Map.entry("RateLimit-Policy", "\"api\";q=10;w=1, \"api-hourly\";q=1000;w=3600"),
                Map.entry("RateLimit", "\"api\";r=0;t=1"));
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
        assertThat(allowed.limit()).isEqualTo(5);
    }

    @Test
    void failedDecisionsCarryNoRateLimitHeaders() {
        Decision failed = new Decision(Decision.Outcome.FAILED_OPEN, List.of(), Duration.ZERO);
        assertThat(headers(failed, HeaderStyle.BOTH)).isEmpty();
    }

    @Test
    void problemBodiesFollowRfc9457() {
        assertThat(HttpAnswers.tooManyRequests(rejected)).isEqualTo("{\"type\":\"about:blank\",\"title\":\"Too Many Requests\","
                + "\"status\":429,\"detail\":\"Rate limit exceeded for policy 'api'; retry after 1 s.\",\"policy\":\"api\"}");
        assertThat(HttpAnswers.serviceUnavailable()).contains("\"status\":503");
    }
}
