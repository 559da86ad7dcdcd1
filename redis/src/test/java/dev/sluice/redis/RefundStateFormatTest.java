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
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * refund.lua reads and writes the token bucket's and GCRA's states as decide.lua does: a refund
 * of a compact key gives back its cost and leaves a compact string with its TTL, and a key still
 * in the old decimal format (a rolling deploy) is refunded exactly as its compact twin, and
 * rewritten compact.
 */
class RefundStateFormatTest {

    private final RedissonClient client = Stores.client();

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aRefundOfACompactOrOldStateGivesBackItsCostAndKeepsTheFormatAndTtl(Algorithm algorithm) {
        for (boolean changed : new boolean[] {false, true}) {
            ManualClock clock = new ManualClock();
            DecideScript script = new DecideScript(client, clock);
            LeaseScripts refunds = new LeaseScripts(client, clock);
            List<Limit> before = List.of(Limit.of("rfmt", 7, Duration.ofMinutes(3)).withBurst(9).withAlgorithm(algorithm));
            // a changed limit: a state written under other units is not refunded, in either format
            List<Limit> after = changed
                    ? List.of(Limit.of("rfmt", 5, Duration.ofMinutes(2)).withBurst(4).withAlgorithm(algorithm)) : before;
            String compact = "rfmt-" + UUID.randomUUID();
            String old = "rfmt-" + UUID.randomUUID();
            for (String tag : List.of(compact, old)) {
                script.decide(tag, before, 6).join().apply(0);
            }
            String compactKey = Keys.key(compact, "rfmt", algorithm.keySuffix());
            String oldKey = Keys.key(old, "rfmt", algorithm.keySuffix());
            StoredState.rewriteInOldFormat(client, oldKey, algorithm == Algorithm.GCRA);
            assertThat(client.getKeys().getType(oldKey)).isEqualTo(algorithm == Algorithm.GCRA ? RType.OBJECT : RType.MAP);
            clock.advance(Duration.ofSeconds(5));
            String compactBefore = StoredState.raw(client, compactKey);
            Map<String, Long> ttlBefore = new HashMap<>();
            for (String key : List.of(compactKey, oldKey)) {
                ttlBefore.put(key, client.getBucket(key, StringCodec.INSTANCE).remainTimeToLive());
            }

            refunds.refund(compact, after).join();
            refunds.refund(old, after).join();

            for (String key : List.of(compactKey, oldKey)) {
                long ttl = client.getBucket(key, StringCodec.INSTANCE).remainTimeToLive();
                assertThat(ttl).as("%s keeps a TTL (changed %s)", key, changed).isPositive().isLessThanOrEqualTo(ttlBefore.get(key));
            }
            if (changed) {
                assertThat(StoredState.raw(client, compactKey)).as("other units: nothing refunded").isEqualTo(compactBefore);
            } else {
                assertThat(StoredState.raw(client, compactKey)).as("refunded").isNotEqualTo(compactBefore);
                assertThat(client.getKeys().getType(oldKey)).as("rewritten compact").isEqualTo(RType.OBJECT);
                assertThat(StoredState.raw(client, oldKey)).as("rewritten compact")
                        .isEqualTo(StoredState.raw(client, compactKey)).contains(".").doesNotContain("@");
            }
            // Both decide alike from here on, and the refund gave back one request of cost 1.
            Decision compactNext = script.decide(compact, after, 1).join().apply(0);
            Decision oldNext = script.decide(old, after, 1).join().apply(0);
            assertThat(oldNext).as("changed %s", changed).isEqualTo(compactNext);
            if (!changed) {
                // 9 - 6 spent, plus 5 s of refill at 7 per 3 min (none whole yet), plus 1 refunded, less 1 now
                assertThat(compactNext.quotas().get(0).remaining()).isEqualTo(3);
            }
        }
    }
}
