package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.internal.Keys;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Stores;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.api.RType;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rolling deploy: buckets written by the version before (a decimal hash for the token bucket,
 * a decimal '@' string for GCRA) are read by the compact format's script exactly as their compact
 * twins are, under the same limit and under a changed one, and rewritten compact at their next
 * commit: no caller is reset or wedged.
 */
class OldStateFormatTest {

    private final RedissonClient client = Stores.client();

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aStateInTheOldFormatDecidesAsItsCompactTwin(Algorithm algorithm) {
        for (boolean changed : new boolean[] {false, true}) {
            ManualClock clock = new ManualClock();
            DecideScript script = new DecideScript(client, clock);
            List<Limit> before = List.of(Limit.of("fmt", 7, Duration.ofMinutes(3)).withBurst(9).withAlgorithm(algorithm));
            List<Limit> after = changed
                    ? List.of(Limit.of("fmt", 5, Duration.ofMinutes(2)).withBurst(4).withAlgorithm(algorithm)) : before;
            String compact = "fmt-" + UUID.randomUUID();
            String old = "fmt-" + UUID.randomUUID();
            for (String tag : List.of(compact, old)) {
                script.decide(tag, before, 6).join().apply(0);
            }
            String oldKey = Keys.key(old, "fmt", algorithm.keySuffix());
            StoredState.rewriteInOldFormat(client, oldKey, algorithm == Algorithm.GCRA);
            assertThat(client.getKeys().getType(oldKey)).isEqualTo(algorithm == Algorithm.GCRA ? RType.OBJECT : RType.MAP);
            for (int step = 0; step < 12; step++) {
                clock.advance(Duration.ofSeconds(7));
                int requests = 1 + step % 3;
                var expected = script.decide(compact, after, requests).join();
                var actual = script.decide(old, after, requests).join();
                for (int r = 0; r < requests; r++) {
                    Decision twin = expected.apply(r);
                    assertThat(actual.apply(r)).as("changed %s step %d request %d", changed, step, r).isEqualTo(twin);
                }
            }
            assertThat(client.getKeys().getType(oldKey)).as("rewritten compact").isEqualTo(RType.OBJECT);
            assertThat(StoredState.raw(client, oldKey)).contains(".").doesNotContain("@");
        }
    }
}
