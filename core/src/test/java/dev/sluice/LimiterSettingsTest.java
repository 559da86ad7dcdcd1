package dev.sluice;

import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The settings both limiters' builders share, and what a limiter of other limits keeps of them. */
class LimiterSettingsTest {

    /** A listener that remembers the policies of what it heard. */
    private static final class Heard implements DecisionListener {
        final List<String> policies = new CopyOnWriteArrayList<>();

        @Override
        public void onDecision(Decision decision, long elapsedNanos) {
            policies.add(decision.binding() == null ? "-" : decision.binding().limit().policy());
        }
    }

    @Test
    void aLimiterWithOtherLimitsSharesTheStoreAndEverySetting() {
        MemoryStore store = MemoryStore.create();
        Heard heard = new Heard();
        Executor executor = Runnable::run;
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("plan", "2/1m")).store(store)
                .failureMode(FailureMode.LOCAL).localShare(0.5).timeout(Duration.ofMillis(250)).shadowMode(true)
                .listener(heard).executor(executor).build();

        RateLimiter other = limiter.withLimits(List.of(Limit.of("plan~gold", "4/1m")));

        assertThat(other.store()).isSameAs(store);
        assertThat(other.failureMode()).isEqualTo(FailureMode.LOCAL);
        assertThat(other.localShare()).isEqualTo(0.5);
        assertThat(other.localLimits()).extracting(Limit::count).containsExactly(2L);
        assertThat(other.timeout()).isEqualTo(Duration.ofMillis(250));
        assertThat(other.shadowMode()).isTrue();
        assertThat(other.limits()).extracting(Limit::policy).containsExactly("plan~gold");
        other.decide("c");
        limiter.decide("c");
        assertThat(heard.policies).as("one listener for both").containsExactly("plan~gold", "plan");
        assertThat(other.decide("c").remaining()).as("its own budget, in the same store").isEqualTo(2);

        Heard own = new Heard();
        RateLimiter named = limiter.withLimits(List.of(Limit.of("plan~team", "9/1m")), own);
        named.decide("c");
        assertThat(own.policies).containsExactly("plan~team");
        assertThat(heard.policies).as("the first listener did not hear it").doesNotContain("plan~team");
        assertThat(named.store()).isSameAs(store);
    }

    @Test
    void aLimiterWithOtherLimitsChecksThemAsTheBuilderDoes() {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("a", "1/s")).build();
        assertThatThrownBy(() -> limiter.withLimits(List.of())).hasMessageContaining("at least one 'limit'");
        assertThatThrownBy(() -> limiter.withLimits(List.of(Limit.of("b", "1/s"), Limit.of("b", "2/s"))))
                .hasMessageContaining("'policy' 'b' is used by two limits");
        assertThatThrownBy(() -> limiter.withLimits(List.of(Limit.concurrency("c", 2, Duration.ofSeconds(30)))))
                .hasMessageContaining("decided by a ConcurrencyLimiter");
    }

    @Test
    void aConcurrencyLimitRefusesTheLocalFailureModeNamingTheSettingAndTheValue() {
        assertThatThrownBy(() -> ConcurrencyLimiter.builder()
                .limit(Limit.concurrency("reports", 5, Duration.ofSeconds(30)))
                .failureMode(FailureMode.LOCAL).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "'failure-mode' of concurrency policy 'reports' must be open or closed: its leases are held "
                        + "in the store alone, so no local limiter can take over while the store fails, got 'local'");
        for (FailureMode mode : List.of(FailureMode.OPEN, FailureMode.CLOSED)) {
            assertThat(ConcurrencyLimiter.builder().limit(Limit.concurrency("reports", 5, Duration.ofSeconds(30)))
                    .failureMode(mode).build().failureMode()).isEqualTo(mode);
        }
    }
}
