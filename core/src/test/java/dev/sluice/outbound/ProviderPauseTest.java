package dev.sluice.outbound;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/** What pause a provider's answer asks for: Retry-After, and the RateLimit headers saying the budget is spent. */
class ProviderPauseTest {

    private static final long NOW = 1_800_000_000_000L;

    private static Function<String, String> headers(String... namesAndValues) {
        Map<String, String> map = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (int i = 0; i < namesAndValues.length; i += 2) {
            map.put(namesAndValues[i], namesAndValues[i + 1]);
        }
        return map::get;
    }

    private static Duration pause(int status, String... namesAndValues) {
        return ProviderPause.requested(status, headers(namesAndValues), NOW);
    }

    @Test
    void retryAfterInSecondsOrAsAnHttpDateOn429Or503() {
        assertThat(pause(429, "Retry-After", "2")).isEqualTo(Duration.ofSeconds(2));
        assertThat(pause(503, "retry-after", " 30 ")).isEqualTo(Duration.ofSeconds(30));
        String date = DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.ROOT)
                .format(Instant.ofEpochMilli(NOW + 7_000).atOffset(ZoneOffset.UTC));
        assertThat(pause(429, "Retry-After", date)).isEqualTo(Duration.ofSeconds(7));
        // a date that has passed, a 200's Retry-After, garbage, a negative number: no pause
        String past = DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.ROOT)
                .format(Instant.ofEpochMilli(NOW - 7_000).atOffset(ZoneOffset.UTC));
        assertThat(pause(429, "Retry-After", past)).isZero();
        assertThat(pause(200, "Retry-After", "2")).isZero();
        assertThat(pause(429, "Retry-After", "soon")).isZero();
        assertThat(pause(429, "Retry-After", "-5")).isZero();
        assertThat(pause(429)).as("a 429 that says nothing more").isZero();
    }

    @Test
    void theDraftsStructuredRateLimitHeaderWithNothingRemaining() {
        assertThat(pause(200, "RateLimit", "\"default\";r=0;t=30")).isEqualTo(Duration.ofSeconds(30));
        assertThat(pause(200, "RateLimit", "\"burst\";r=5;t=1, \"day\";r=0;t=600")).isEqualTo(Duration.ofSeconds(600));
        assertThat(pause(200, "RateLimit", "\"default\";r=3;t=30")).as("budget left").isZero();
        // the earlier drafts' dictionary
        assertThat(pause(200, "RateLimit", "limit=100, remaining=0, reset=12")).isEqualTo(Duration.ofSeconds(12));
        assertThat(pause(200, "RateLimit", "limit=100, remaining=1, reset=12")).isZero();
    }

    @Test
    void theLegacyRemainingAndResetHeaders() {
        assertThat(pause(200, "RateLimit-Remaining", "0", "RateLimit-Reset", "9")).isEqualTo(Duration.ofSeconds(9));
        assertThat(pause(200, "RateLimit-Remaining", "4", "RateLimit-Reset", "9")).isZero();
        assertThat(pause(200, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "5")).isEqualTo(Duration.ofSeconds(5));
        // GitHub's reset: the epoch second it comes back
        assertThat(pause(403, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", Long.toString(NOW / 1000 + 60)))
                .isEqualTo(Duration.ofSeconds(60));
        assertThat(pause(200, "RateLimit-Remaining", "0")).as("no reset: nothing to go by").isZero();
    }

    @Test
    void theLongestOfWhatTheHeadersAsk() {
        assertThat(pause(429, "Retry-After", "2", "RateLimit", "\"default\";r=0;t=5")).isEqualTo(Duration.ofSeconds(5));
        assertThat(pause(429, "Retry-After", "86400")).as("capped by Permits, not here").isEqualTo(Duration.ofDays(1));
    }
}
