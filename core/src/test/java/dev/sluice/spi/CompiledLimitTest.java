package dev.sluice.spi;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.internal.Units;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** A limit compiled once per instance, with the units both stores compute with. */
class CompiledLimitTest {

    @Test
    void aLimitInstanceIsCompiledOnceAndAnEqualInstanceOnItsOwn() {
        Limit limit = Limit.of("compiled", "10/s");
        Limit equal = Limit.of("compiled", "10/s");
        assertThat(equal).isEqualTo(limit).isNotSameAs(limit);
        assertThat(CompiledLimit.of(limit)).isSameAs(CompiledLimit.of(limit));
        assertThat(CompiledLimit.of(equal)).as("looked up by identity, not by the record's equality")
                .isNotSameAs(CompiledLimit.of(limit));
    }

    @Test
    void aBucketHasTheUnitsOfUnits() {
        Limit limit = Limit.of("compiled-tb", 7, Duration.ofMillis(30)).withBurst(20).withCost(3);
        CompiledLimit compiled = CompiledLimit.of(limit);
        Units units = Units.of(7, 30_000, 20);
        // 7 per 30,000 us: gcd 1, so a token is 30,000 units and a microsecond refills 7
        assertThat(compiled.unitsPerToken()).isEqualTo(units.unitsPerToken()).isEqualTo(30_000);
        assertThat(compiled.unitsPerMicro()).isEqualTo(units.unitsPerMicro()).isEqualTo(7);
        assertThat(compiled.capacityUnits()).isEqualTo(units.capacityUnits()).isEqualTo(600_000);
        assertThat(compiled.costUnits()).isEqualTo(90_000);
        // refilling 600,000 units at 7 a microsecond takes 85,714.3 us: 85,715, and one more
        assertThat(compiled.longestTtlMicros()).isEqualTo(85_716);
        assertThat(compiled.longestTtlNanos()).isEqualTo(85_716_000);
    }

    @Test
    void windowsAndLogsCountWholeUnits() {
        Limit window = Limit.of("compiled-w", 100, Duration.ofMinutes(1)).withCost(2);
        for (Algorithm algorithm : new Algorithm[] {Algorithm.FIXED_WINDOW, Algorithm.SLIDING_WINDOW,
                Algorithm.SLIDING_LOG}) {
            CompiledLimit compiled = CompiledLimit.of(window.withAlgorithm(algorithm));
            assertThat(compiled.unitsPerToken()).isEqualTo(1);
            assertThat(compiled.unitsPerMicro()).isEqualTo(1);
            assertThat(compiled.capacityUnits()).isEqualTo(100);
            assertThat(compiled.costUnits()).isEqualTo(2);
            assertThat(compiled.longestTtlMicros()).as(algorithm.configName())
                    .isEqualTo(algorithm == Algorithm.SLIDING_WINDOW ? 120_000_000 : 60_000_000);
        }
    }

    @Test
    void aYearLongTtlIsExactInNanoseconds() {
        Limit yearly = Limit.of("compiled-year", 1, Duration.ofDays(366)).withAlgorithm(Algorithm.SLIDING_WINDOW);
        assertThat(CompiledLimit.of(yearly).longestTtlNanos()).isEqualTo(2 * 366 * 86_400_000_000_000L);
    }

    @Test
    void theCostDoesNotChangeTheParameters() {
        Limit limit = Limit.of("compiled-p", "10/s").withBurst(20);
        assertThat(CompiledLimit.of(limit).sameParameters(CompiledLimit.of(limit.withCost(5)))).isTrue();
        assertThat(CompiledLimit.of(limit).sameParameters(CompiledLimit.of(limit.withBurst(19)))).isFalse();
        assertThat(CompiledLimit.of(limit).sameParameters(CompiledLimit.of(Limit.of("compiled-p", "10/2s")))).isFalse();
    }
}
