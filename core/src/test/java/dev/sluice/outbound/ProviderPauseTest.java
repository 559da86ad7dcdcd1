package dev.sluice.outbound;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
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
        return ProviderPause.requested(status, headers(namesAndValues), NOW, unmeant -> { });
    }

    /** What the answer says that cannot be meant, or {@code null}. */
    private static String unmeant(int status, String... namesAndValues) {
        List<String> said = new ArrayList<>();
        Duration pause = ProviderPause.requested(status, headers(namesAndValues), NOW, said::add);
        assertThat(pause).as("no pause from what cannot be meant").isZero();
        assertThat(said).as("reported once").hasSizeLessThanOrEqualTo(1);
        return said.isEmpty() ? null : said.get(0);
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

    /**
     * The two obsolete date formats every HTTP recipient must accept (RFC 9110, section 5.6.7):
     * RFC 850's, whose two-digit year is the one within 50 years of now, and asctime's.
     */
    @Test
    void retryAfterAsAnHttpDateInTheObsoleteFormats() {
        // NOW is 2027-01-15T08:00:00Z, a Friday
        assertThat(Instant.ofEpochMilli(NOW)).isEqualTo(Instant.parse("2027-01-15T08:00:00Z"));
        assertThat(pause(429, "Retry-After", "Fri, 15 Jan 2027 08:00:07 GMT")).isEqualTo(Duration.ofSeconds(7));
        assertThat(pause(429, "Retry-After", "Friday, 15-Jan-27 08:00:07 GMT")).as("RFC 850")
                .isEqualTo(Duration.ofSeconds(7));
        assertThat(pause(503, "Retry-After", "Fri Jan 15 08:00:09 2027")).as("asctime")
                .isEqualTo(Duration.ofSeconds(9));
        assertThat(pause(429, "Retry-After", "Sat Jan 16 08:00:00 2027")).as("asctime").isEqualTo(Duration.ofDays(1));
        assertThat(pause(429, "Retry-After", "Mon Feb  1 08:00:00 2027")).as("asctime, a one-digit day")
                .isEqualTo(Duration.ofDays(17));
        assertThat(pause(429, "Retry-After", "Friday, 15-Jan-27 07:59:00 GMT")).as("RFC 850, passed").isZero();
        assertThat(pause(429, "Retry-After", "Friday, 15-Jan-27 08:00:07 PST")).as("only GMT").isZero();
    }

    @Test
    void aFractionalEpochResetPausesUntilIt() {
        assertThat(pause(200, "RateLimit-Remaining", "0", "RateLimit-Reset", Long.toString(NOW / 1000 + 60) + ".5"))
                .isEqualTo(Duration.ofMillis(60_500));
        assertThat(pause(200, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2.25"))
                .isEqualTo(Duration.ofMillis(2_250));
        assertThat(pause(200, "RateLimit", "limit=100, remaining=0, reset=1.5")).isEqualTo(Duration.ofMillis(1_500));
    }

    /**
     * A reset or retry that cannot be meant (an epoch in milliseconds, read as seconds tens of
     * thousands of years ahead; anything more than a year ahead) is bad input: no pause, reported
     * (for a log line) with the header's name and value. A day is meant, and capped by the
     * permits (see {@link #theLongestOfWhatTheHeadersAsk}).
     */
    @Test
    void aResetThatCannotBeMeantIsBadInputNotAPause() {
        assertThat(unmeant(200, "RateLimit-Remaining", "0", "RateLimit-Reset", Long.toString(NOW + 60_000)))
                .isEqualTo("RateLimit-Reset: " + (NOW + 60_000));
        assertThat(unmeant(200, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset",
                Long.toString(NOW / 1000 + 3 * 366 * 86_400L)))
                .startsWith("X-RateLimit-Reset: ");
        assertThat(unmeant(200, "RateLimit-Remaining", "0", "RateLimit-Reset", "400000000")).as("a delta of 12 years")
                .startsWith("RateLimit-Reset: ");
        assertThat(unmeant(429, "Retry-After", "Fri, 15 Jan 2055 08:00:07 GMT")).startsWith("Retry-After: ");
        assertThat(unmeant(429, "Retry-After", "99999999999999999999")).startsWith("Retry-After: ");
        assertThat(unmeant(200, "RateLimit", "\"default\";r=0;t=1800000000000")).startsWith("RateLimit: ");
        assertThat(pause(200, "RateLimit-Remaining", "0", "RateLimit-Reset", Long.toString(NOW / 1000 + 30 * 86_400L)))
                .as("a month ahead: a monthly quota").isEqualTo(Duration.ofDays(30));
        assertThat(unmeant(429, "Retry-After", "soon")).as("unreadable: no pause, as before, and nothing to report")
                .isNull();
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
