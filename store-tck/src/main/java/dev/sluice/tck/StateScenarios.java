package dev.sluice.tck;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an operator does to the stored state: a caller reset (its budgets whole again, nobody
 * else's touched) and the limit overrides kept for the applications sharing the store.
 */
abstract class StateScenarios extends Scenarios {

    StateScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    /** A caller's budgets made whole. */
    @Nested
    @Needs(Capability.RESETS)
    @DisplayName("reset (RESETS)")
    class Resets {

        @ParameterizedTest(name = "{0}")
        @MethodSource("dev.sluice.tck.Scenarios#everyAlgorithm")
        void aResetMakesTheCallersBudgetWholeUnderThoseLimitsOnly(Algorithm algorithm) {
            ManualClock clock = new ManualClock();
            RateLimitStore store = newStore(clock);
            Limit limit = FIVE.withAlgorithm(algorithm);
            Limit other = Limit.of("conformance-other", 5, Duration.ofSeconds(100)).withAlgorithm(algorithm);
            RateLimiter limiter = limiter(store, limit);
            RateLimiter otherLimiter = limiter(store, other);
            String caller = "reset-" + UUID.randomUUID();
            String neighbour = "reset-neighbour-" + UUID.randomUUID();
            String where = algorithm + " on " + storeName();
            for (String spender : List.of(caller, neighbour)) {
                assertThat(limiter.decide(spender, 5).allowed()).as(where + ": " + spender + " spends all").isTrue();
            }
            assertThat(otherLimiter.decide(caller, 5).allowed()).as(where + ": under the other limit").isTrue();

            store.reset(caller, List.of(limit)).toCompletableFuture().join();
            Decision after = limiter.decide(caller);
            assertThat(after.allowed()).as(where + ": the caller, reset").isTrue();
            assertThat(after.remaining()).as(where + ": a whole budget, one spent").isEqualTo(4);
            assertThat(limiter.decide(neighbour).allowed()).as(where + ": another caller, not reset").isFalse();
            assertThat(otherLimiter.decide(caller).allowed()).as(where + ": the caller under another limit").isFalse();
        }
    }

    /** Limit overrides kept in the store. */
    @Nested
    @Needs(Capability.OVERRIDES)
    @DisplayName("overrides (OVERRIDES)")
    class Overrides {

        @Test
        void anOverrideIsReadBackUntilItIsCleared() {
            RateLimitStore store = newStore(new ManualClock());
            String policy = "override-" + UUID.randomUUID();
            String where = storeName() + ", policy " + policy;
            assertThat(store.overrides().toCompletableFuture().join()).as(where + ": before").doesNotContainKey(policy);

            store.putOverride(policy, "limit=10/1m").toCompletableFuture().join();
            assertThat(store.overrides().toCompletableFuture().join()).as(where + ": written")
                    .containsEntry(policy, "limit=10/1m");
            store.putOverride(policy, "limit=20/1m,burst=40").toCompletableFuture().join();
            assertThat(store.overrides().toCompletableFuture().join()).as(where + ": rewritten, the value opaque")
                    .containsEntry(policy, "limit=20/1m,burst=40");

            store.putOverride(policy, null).toCompletableFuture().join();
            assertThat(store.overrides().toCompletableFuture().join()).as(where + ": cleared")
                    .doesNotContainKey(policy);
        }
    }
}
