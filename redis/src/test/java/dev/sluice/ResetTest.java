package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Stores;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RateLimiter#reset}: one caller's state under the limiter's limits goes, on both stores. */
class ResetTest {

    @ParameterizedTest
    @EnumSource(Stores.class)
    void resetGivesACallerItsWholeBudgetBackOnEveryAlgorithmAndNobodyElse(Stores stores) {
        ManualClock clock = new ManualClock();
        RateLimitStore store = stores.create(clock);
        for (Algorithm algorithm : Algorithm.rates()) {
            RateLimiter limiter = RateLimiter.builder().limit(Limit.of("reset", "2/1h").withAlgorithm(algorithm))
                    .limit(Limit.of("reset-daily", "5/1d").withAlgorithm(algorithm))
                    .store(store).timeout(Stores.PATIENT).build();
            RateLimiter other = RateLimiter.builder().limit(Limit.of("untouched", "2/1h").withAlgorithm(algorithm))
                    .store(store).timeout(Stores.PATIENT).build();
            String caller = "reset-" + algorithm + "-" + UUID.randomUUID();
            String bystander = "bystander-" + algorithm + "-" + UUID.randomUUID();
            limiter.decide(caller);
            limiter.decide(caller);
            other.decide(caller);
            limiter.decide(bystander);
            assertThat(limiter.decide(caller).allowed()).isFalse();

            limiter.reset(caller);

            Decision after = limiter.decide(caller);
            assertThat(after.allowed()).as(algorithm.configName()).isTrue();
            assertThat(after.quotas().get(0).remaining()).as(algorithm.configName()).isEqualTo(1);
            assertThat(after.quotas().get(1).remaining()).as(algorithm.configName() + ", the daily limit too")
                    .isEqualTo(4);
            assertThat(limiter.decide(bystander).remaining()).as("another caller keeps its state").isZero();
            assertThat(other.decide(caller).remaining()).as("the caller under another limiter's policy").isZero();
        }
    }
}
