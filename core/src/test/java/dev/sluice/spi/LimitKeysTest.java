package dev.sluice.spi;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Key names are part of the stored state's format: these are the names every store writes and reads. */
class LimitKeysTest {

    @Test
    void eachAlgorithmKeepsItsKeyName() {
        Map<Algorithm, String> expected = new EnumMap<>(Algorithm.class);
        expected.put(Algorithm.TOKEN_BUCKET, "sluice:{ip~192.0.2.1}:login:tb");
        expected.put(Algorithm.GCRA, "sluice:{ip~192.0.2.1}:login:gcra");
        expected.put(Algorithm.SLIDING_WINDOW, "sluice:{ip~192.0.2.1}:login:sw");
        expected.put(Algorithm.FIXED_WINDOW, "sluice:{ip~192.0.2.1}:login:fw");
        expected.put(Algorithm.SLIDING_LOG, "sluice:{ip~192.0.2.1}:login:sl");
        expected.put(Algorithm.CONCURRENCY, "sluice:{ip~192.0.2.1}:login:cc");
        assertThat(expected).containsOnlyKeys(Algorithm.values());
        expected.forEach((algorithm, key) -> {
            Limit limit = algorithm.isRate() ? Limit.of("login", "5/1m").withAlgorithm(algorithm)
                    : Limit.concurrency("login", 5, Duration.ofSeconds(30));
            assertThat(LimitKeys.key("ip~192.0.2.1", limit)).as("%s", algorithm).isEqualTo(key);
        });
    }
}
