package dev.sluice.gateway;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A route's arguments compiled into limits: several limits, defaults, and errors that name their source. */
class RouteLimitsTest {

    private final MemoryStore store = MemoryStore.create();

    @AfterEach
    void close() {
        store.close();
    }

    private RouteLimits compile(String route, SluiceRateLimiter.Config arguments, SluiceRateLimiter.Config defaults) {
        return RouteLimits.of(route, arguments, defaults, store);
    }

    @Test
    void severalLimitsCountUnderThePolicyAndTheirPeriodWithBurstsByPosition() {
        RouteLimits limits = compile("api", new SluiceRateLimiter.Config().setLimit("10/1s, 1000/1h").setBurst("20")
                .setAlgorithm("gcra").setCost("2"), new SluiceRateLimiter.Config());
        assertThat(limits.limiter().limits()).containsExactly(
                new Limit("api-1s", Algorithm.GCRA, 10, Duration.ofSeconds(1), 20, 2),
                new Limit("api-1h", Algorithm.GCRA, 1000, Duration.ofHours(1), 1000, 2));
    }

    @Test
    void unsetArgumentsComeFromTheDefaults() {
        RouteLimits limits = compile("orders", new SluiceRateLimiter.Config().setPolicy("shared"),
                new SluiceRateLimiter.Config().setLimit("5/1m").setAlgorithm("fixed-window"));
        assertThat(limits.limiter().limits())
                .containsExactly(new Limit("shared", Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1), 5, 1));
    }

    @Test
    void aRouteIdThatIsNoPolicyNameIsHashed() {
        assertThat(RouteLimits.policyOf("api")).isEqualTo("api");
        assertThat(RouteLimits.policyOf("ReactiveCompositeDiscoveryClient_orders/v1"))
                .matches("route-[0-9a-f]{16}")
                .isEqualTo(RouteLimits.policyOf("ReactiveCompositeDiscoveryClient_orders/v1"))
                .isNotEqualTo(RouteLimits.policyOf("ReactiveCompositeDiscoveryClient_orders/v2"));
    }

    @Test
    void errorsNameTheRouteTheArgumentAndTheValue() {
        SluiceRateLimiter.Config none = new SluiceRateLimiter.Config();
        assertThatThrownBy(() -> compile("api", new SluiceRateLimiter.Config().setLimit("100/minutes"), none))
                .hasMessageStartingWith("route 'api': argument 'sluice-rate-limiter.limit' must look like")
                .hasMessageContaining("'100/minutes'");
        assertThatThrownBy(() -> compile("api", none, new SluiceRateLimiter.Config().setLimit("1/s")
                .setFailureMode("sometimes")))
                .hasMessage("route 'api': property 'sluice.gateway.failure-mode' must be open, closed or local, "
                        + "got 'sometimes'");
        assertThatThrownBy(() -> compile("api", new SluiceRateLimiter.Config().setLimit("1/s").setBurst("1,2"), none))
                .hasMessageContaining("argument 'sluice-rate-limiter.burst'").hasMessageContaining("'1,2'");
        assertThatThrownBy(() -> compile("api", new SluiceRateLimiter.Config().setLimit("1/s")
                .setAlgorithm("concurrency"), none))
                .hasMessageContaining("argument 'sluice-rate-limiter.algorithm'").hasMessageContaining("'concurrency'");
        assertThatThrownBy(() -> compile("api", new SluiceRateLimiter.Config().setLimit("1/s,2/s"), none))
                .hasMessageContaining("'api-s'");
        assertThatThrownBy(() -> compile("api", none, none))
                .hasMessageContaining("'sluice-rate-limiter.limit'").hasMessageContaining("'sluice.gateway.limit'");
        assertThatThrownBy(() -> compile("api", new SluiceRateLimiter.Config().setLimit("1/s").setTimeout("soon"),
                none)).hasMessageContaining("argument 'sluice-rate-limiter.timeout'").hasMessageContaining("'soon'");
    }
}
