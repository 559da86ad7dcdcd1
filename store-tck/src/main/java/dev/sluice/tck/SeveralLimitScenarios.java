package dev.sluice.tck;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Several limits on one request: decided together, all or nothing, nothing charged unless all allow. */
abstract class SeveralLimitScenarios extends Scenarios {

    SeveralLimitScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void severalLimitsAreAllOrNothing(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        Limit shortLimit = Limit.of("short", 2, Duration.ofSeconds(100)).withAlgorithm(algorithm);
        Limit longLimit = Limit.of("long", 3, Duration.ofSeconds(1000)).withAlgorithm(algorithm);
        RateLimiter limiter = RateLimiter.builder().limit(shortLimit).limit(longLimit).store(newStore(clock))
                .timeout(PATIENT).build();
        String caller = "multi-" + UUID.randomUUID();

        assertThat(limiter.decide(caller).allowed()).isTrue();
        assertThat(limiter.decide(caller).allowed()).isTrue();
        Decision third = limiter.decide(caller);
        assertThat(third.outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(third.quotas()).extracting(Decision.Quota::allowed).containsExactly(false, true);
        assertThat(third.quotas()).extracting(Decision.Quota::remaining).containsExactly(0L, 1L);
        assertThat(third.binding().limit()).isEqualTo(shortLimit);

        clock.advance(Duration.ofSeconds(200)); // the short limit is whole again; the long one is not
        Decision fourth = limiter.decide(caller);
        assertThat(fourth.allowed()).isTrue();
        assertThat(fourth.quotas()).extracting(Decision.Quota::remaining).containsExactly(1L, 0L);
        assertThat(fourth.binding().limit()).isEqualTo(longLimit);

        for (int i = 0; i < 3; i++) {
            // the long limit refuses; the short one admits each time, and must not be charged
            Decision refused = limiter.decide(caller);
            assertThat(refused.allowed()).isFalse();
            assertThat(refused.quotas()).extracting(Decision.Quota::allowed).containsExactly(true, false);
            assertThat(refused.quotas()).extracting(Decision.Quota::remaining).containsExactly(1L, 0L);
            assertThat(refused.retryAfter()).isEqualTo(refused.quotas().get(1).retryAfter()).isPositive();
        }
    }
}
