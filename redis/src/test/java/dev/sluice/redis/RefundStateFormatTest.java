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
 * of a key in the current form gives back its cost and leaves the current form with its TTL, and
 * a key still in an earlier form, hex or decimal (a rolling deploy), is refunded exactly as its
 * twin in the current form, and rewritten in it.
 */
class RefundStateFormatTest {

    private final RedissonClient client = Stores.client();

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aRefundOfACurrentOrEarlierStateGivesBackItsCostAndKeepsTheFormatAndTtl(Algorithm algorithm) {
        for (StoredState.Earlier form : StoredState.Earlier.values()) {
            for (boolean changed : new boolean[] {false, true}) {
                refundsAsItsTwin(algorithm, form, changed);
            }
        }
    }

    private void refundsAsItsTwin(Algorithm algorithm, StoredState.Earlier form, boolean changed) {
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
        StoredState.rewrite(client, oldKey, algorithm == Algorithm.GCRA, form);
        boolean hash = algorithm == Algorithm.TOKEN_BUCKET && form == StoredState.Earlier.DECIMAL;
        assertThat(client.getKeys().getType(oldKey)).isEqualTo(hash ? RType.MAP : RType.OBJECT);
        clock.advance(Duration.ofSeconds(5));
        byte[] compactBefore = StoredState.raw(client, compactKey);
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
            assertThat(StoredState.isCurrent(client, oldKey)).as("other units: %s left as it was", form).isFalse();
        } else {
            assertThat(StoredState.raw(client, compactKey)).as("refunded").isNotEqualTo(compactBefore);
            assertThat(StoredState.isCurrent(client, compactKey)).as("the current form").isTrue();
            assertThat(StoredState.isCurrent(client, oldKey)).as("%s rewritten in the current form", form).isTrue();
            assertThat(StoredState.raw(client, oldKey)).as("%s refunded as its twin", form)
                    .isEqualTo(StoredState.raw(client, compactKey));
        }
        // Both decide alike from here on, and the refund gave back one request of cost 1.
        Decision compactNext = script.decide(compact, after, 1).join().apply(0);
        Decision oldNext = script.decide(old, after, 1).join().apply(0);
        assertThat(oldNext).as("%s changed %s", form, changed).isEqualTo(compactNext);
        if (!changed) {
            // 9 - 6 spent, plus 5 s of refill at 7 per 3 min (none whole yet), plus 1 refunded, less 1 now
            assertThat(compactNext.quotas().get(0).remaining()).isEqualTo(3);
        }
    }
}
