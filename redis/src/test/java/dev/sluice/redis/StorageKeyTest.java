package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.internal.Keys;
import dev.sluice.spi.LimitKeys;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The one key a decision builds: its tag, its Redis keys, its equality. */
class StorageKeyTest {

    private final List<Limit> limits = List.of(Limit.of("per-ip", "10/1s"),
            Limit.of("per-day", "1000/1d").withAlgorithm(Algorithm.SLIDING_WINDOW));

    @Test
    void holdsTheCallersTagAndOneRedisKeyPerLimitBuiltOnce() {
        String caller = "key:" + "z".repeat(80); // hashed into its tag
        StorageKey key = StorageKey.of(caller, limits);
        assertThat(key.tag).isEqualTo(Keys.tag(caller));
        assertThat(key.keys())
                .containsExactly(LimitKeys.key(key.tag, limits.get(0)), LimitKeys.key(key.tag, limits.get(1)));
        assertThat(key.keys()).as("built once, then the same list").isSameAs(key.keys());
    }

    @Test
    void equalForTheSameCallerUnderEqualLimits() {
        StorageKey key = StorageKey.of("alice", limits);
        StorageKey same = StorageKey.of("alice", new ArrayList<>(limits));
        assertThat(same).isEqualTo(key).hasSameHashCodeAs(key);
        assertThat(same.sameLimits(key)).isTrue();
        assertThat(StorageKey.of("bob", limits)).isNotEqualTo(key);
        StorageKey fewer = StorageKey.of("alice", limits.subList(0, 1));
        assertThat(fewer).isNotEqualTo(key);
        assertThat(fewer.sameLimits(key)).isFalse();
    }
}
