package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.LogCapture;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link Permits#learn}: a provider's pause, recorded for the key and capped at the longest pause with a warning. */
class PermitsPauseTest {

    private static Permits permits() {
        return Permits.of(RateLimiter.builder().limit(Limit.of("partner", 10, Duration.ofSeconds(1)).withBurst(1))
                .store(MemoryStore.create()).build(), Duration.ofSeconds(1));
    }

    @Test
    void aRetryAfterPausesTheKeyAndALongerOneThanTheLongestPauseIsCutAndLoggedWithoutTheKey()
            throws InterruptedException {
        Permits permits = permits().withLongestPause(Duration.ofSeconds(3));
        assertThat(permits.learn("acct-secret", 200, Map.<String, String>of()::get)).as("nothing asked").isZero();
        assertThat(permits.limiter().acquire("acct-secret", Duration.ZERO).outcome())
                .isEqualTo(Decision.Outcome.ALLOWED);
        String log;
        try (LogCapture capture = LogCapture.start()) {
            assertThat(permits.learn("acct-secret", 429, Map.of("Retry-After", "86400")::get))
                    .isEqualTo(Duration.ofSeconds(3));
            log = capture.text();
        }
        assertThat(log).contains("policy partner", "86400 s", "3 s").doesNotContain("acct-secret");
        Decision refused = permits.limiter().acquire("acct-secret", Duration.ZERO);
        assertThat(refused.outcome()).as("paused").isEqualTo(Decision.Outcome.REJECTED);
        assertThat(refused.retryAfter()).as("the cap and one token, not a day")
                .isBetween(Duration.ofMillis(2_500), Duration.ofMillis(3_100));
        assertThat(permits.limiter().acquire("other", Duration.ZERO).outcome()).as("another key")
                .isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(permits.learnAsync("other", 503, Map.of("Retry-After", "1")::get).join())
                .isEqualTo(Duration.ofSeconds(1));
        assertThat(permits.limiter().acquire("other", Duration.ZERO).outcome()).isEqualTo(Decision.Outcome.REJECTED);
    }

    @Test
    void aResetThatCannotBeMeantPausesNothingAndIsLoggedOnceWithoutTheKey() throws InterruptedException {
        Permits permits = permits();
        String millis = Long.toString(System.currentTimeMillis() + 60_000);
        Map<String, String> answer = Map.of("RateLimit-Remaining", "0", "RateLimit-Reset", millis);
        String log;
        try (LogCapture capture = LogCapture.start()) {
            assertThat(permits.learn("acct-secret", 429, answer::get)).as("an epoch in milliseconds: bad input")
                    .isZero();
            assertThat(permits.learnAsync("acct-secret", 429, answer::get).join()).isZero();
            assertThat(permits.learn("acct-secret", 429, Map.of("Retry-After", "Fri, 15 Jan 2100 08:00:07 GMT")::get))
                    .as("a date decades ahead").isZero();
            log = capture.text();
        }
        assertThat(log).contains("policy partner", "RateLimit-Reset: " + millis).doesNotContain("acct-secret");
        assertThat(log.split("cannot be meant", -1)).as("logged once: %s", log).hasSize(2);
        assertThat(permits.limiter().acquire("acct-secret", Duration.ZERO).outcome()).as("not paused")
                .isEqualTo(Decision.Outcome.ALLOWED);
    }

    @Test
    void theLongestPauseIsFromOneSecondToAnHour() {
        assertThat(permits().longestPause()).isEqualTo(Permits.DEFAULT_LONGEST_PAUSE).isEqualTo(Duration.ofMinutes(5));
        assertThatThrownBy(() -> permits().withLongestPause(Duration.ofHours(2)))
                .hasMessage("'longest-pause' must be from 1s to 1h, got 'PT2H'");
        assertThatThrownBy(() -> permits().withLongestPause(Duration.ofMillis(10)))
                .hasMessage("'longest-pause' must be from 1s to 1h, got 'PT0.01S'");
    }
}
