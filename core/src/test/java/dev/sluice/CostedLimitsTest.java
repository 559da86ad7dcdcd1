package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.CompiledLimit;
import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A request's own cost: its limit list is built once per cost, and an impossible cost never reaches the store. */
class CostedLimitsTest {

    /** A memory store that remembers the limit lists it was handed. */
    private static final class Recording implements RateLimitStore {
        final MemoryStore store = MemoryStore.create();
        final List<List<Limit>> seen = Collections.synchronizedList(new ArrayList<>());

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            seen.add(limits);
            return store.decide(caller, limits);
        }

        @Override
        public void close() {
            store.close();
        }
    }

    private static final Limit BUCKET = Limit.of("costed-tb", 1_000, Duration.ofSeconds(1)).withBurst(2_000);
    private static final Limit WINDOW = Limit.of("costed-fw", 5_000, Duration.ofMinutes(1))
            .withAlgorithm(Algorithm.FIXED_WINDOW);

    @Test
    void aRepeatedCostIsDecidedOnTheSameListInstance() {
        Recording store = new Recording();
        RateLimiter limiter = RateLimiter.builder().limit(BUCKET).limit(WINDOW).store(store).build();
        for (long cost : new long[] {3, 3, 300, 300, 3}) {   // 3 is an array slot, 300 a cached one
            assertThat(limiter.decide("c", cost).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        }
        assertThat(limiter.decideAsync("c", 300).toCompletableFuture().join().allowed()).isTrue();
        List<List<Limit>> seen = store.seen;
        assertThat(seen).hasSize(6);
        assertThat(seen.get(1)).isSameAs(seen.get(0)).isSameAs(seen.get(4));
        assertThat(seen.get(3)).isSameAs(seen.get(2)).isSameAs(seen.get(5));
        assertThat(seen.get(0)).extracting(Limit::cost).containsExactly(3L, 3L);
        assertThat(seen.get(2)).containsExactly(BUCKET.withCost(300), WINDOW.withCost(300));
    }

    @Test
    void theConfiguredCostIsTheConfiguredList() {
        Recording store = new Recording();
        RateLimiter limiter = RateLimiter.builder().limit(BUCKET).limit(WINDOW).store(store).build();
        limiter.decide("c");
        limiter.decide("c", 1);
        assertThat(store.seen.get(0)).isSameAs(limiter.limits());
        assertThat(store.seen.get(1)).isSameAs(limiter.limits());
    }

    @Test
    void aCostAboveTheSmallestCapacityIsUnsatisfiableWithoutTheStore() {
        Recording store = new Recording();
        RateLimiter limiter = RateLimiter.builder().limit(BUCKET).limit(WINDOW).store(store).build();
        assertThat(limiter.decide("c", 2_001).outcome()).isEqualTo(Decision.Outcome.UNSATISFIABLE);
        assertThat(limiter.decideAsync("c", Long.MAX_VALUE).toCompletableFuture().join().outcome())
                .isEqualTo(Decision.Outcome.UNSATISFIABLE);
        assertThat(store.seen).isEmpty();
        assertThat(limiter.decide("c", 2_000).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(store.seen).hasSize(1);
    }

    @Test
    void aCostBelowOneNamesTheParameterAndTheValue() {
        RateLimiter limiter = RateLimiter.builder().limit(BUCKET).build();
        assertThatThrownBy(() -> limiter.decide("c", 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("'cost' must be at least 1, got '0'");
        assertThatThrownBy(() -> limiter.decideAsync("c", -5))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("'cost' must be at least 1, got '-5'");
    }

    @Test
    void costsBeyondTheCacheAreStillDecidedCorrectly() {
        Limit big = Limit.of("costed-big", 1_000_000, Duration.ofHours(1));
        CostedLimits costed = new CostedLimits(List.of(big));
        for (long cost = 1; cost <= CostedLimits.ARRAY_COSTS + 2L * CostedLimits.CACHED_COSTS; cost++) {
            assertThat(costed.withCost(cost)).containsExactly(big.withCost(cost));
        }
        assertThat(costed.withCost(1_000_000)).containsExactly(big.withCost(1_000_000));
        assertThat(costed.withCost(1_000_001)).isNull();
    }

    @Test
    void aCostedListIsCompiledWhenBuilt() {
        CostedLimits costed = new CostedLimits(List.of(BUCKET));
        Limit seven = costed.withCost(7).get(0);
        CompiledLimit compiled = CompiledLimit.of(seven);
        assertThat(CompiledLimit.of(seven)).isSameAs(compiled);
        assertThat(compiled.cost()).isEqualTo(7);
        // 1000 per 1,000,000 us: gcd 1000, so a token is 1000 units and a microsecond refills one
        assertThat(compiled.unitsPerToken()).isEqualTo(1_000);
        assertThat(compiled.unitsPerMicro()).isEqualTo(1);
        assertThat(compiled.capacityUnits()).isEqualTo(2_000_000);
        assertThat(compiled.costUnits()).isEqualTo(7_000);
        assertThat(compiled.longestTtlMicros()).isEqualTo(2_000_001);
    }
}
