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
 * A rolling deploy: buckets written by earlier versions (hex strings; before those a decimal hash
 * for the token bucket and a decimal '@' string for GCRA) are read by the current script exactly
 * as their twins in the current binary form are, under the same limit and under a changed one,
 * and rewritten in the current form at their next commit: no caller is reset or wedged.
 */
class OldStateFormatTest {

    private final RedissonClient client = Stores.client();

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aStateInAnEarlierFormatDecidesAsItsTwinInTheCurrentOne(Algorithm algorithm) {
        for (StoredState.Earlier form : StoredState.Earlier.values()) {
            for (boolean changed : new boolean[] {false, true}) {
                decidesAsItsTwin(algorithm, form, changed);
            }
        }
    }

    private void decidesAsItsTwin(Algorithm algorithm, StoredState.Earlier form, boolean changed) {
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
        StoredState.rewrite(client, oldKey, algorithm == Algorithm.GCRA, form);
        boolean hash = algorithm == Algorithm.TOKEN_BUCKET && form == StoredState.Earlier.DECIMAL;
        assertThat(client.getKeys().getType(oldKey)).isEqualTo(hash ? RType.MAP : RType.OBJECT);
        assertThat(StoredState.isCurrent(client, oldKey)).isFalse();
        for (int step = 0; step < 12; step++) {
            clock.advance(Duration.ofSeconds(7));
            int requests = 1 + step % 3;
            var expected = script.decide(compact, after, requests).join();
            var actual = script.decide(old, after, requests).join();
            for (int r = 0; r < requests; r++) {
                Decision twin = expected.apply(r);
                assertThat(actual.apply(r)).as("%s changed %s step %d request %d", form, changed, step, r).isEqualTo(twin);
            }
        }
        assertThat(client.getKeys().getType(oldKey)).as("rewritten in the current form").isEqualTo(RType.OBJECT);
        assertThat(StoredState.isCurrent(client, oldKey)).as("rewritten in the current form").isTrue();
        assertThat(StoredState.raw(client, oldKey)).as("the same state as its twin's")
                .isEqualTo(StoredState.raw(client, Keys.key(compact, "fmt", algorithm.keySuffix())));
    }
}
