package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.internal.Keys;
import dev.sluice.spi.LimitKeys;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Stores;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The token bucket's and GCRA's state is one short binary string: Redis keeps it in one
 * allocation with its header (embstr, up to 44 bytes), 48 bytes for up to 28 bytes of value,
 * where the hex string before took 64. Its numbers stay exact to the largest units a limit
 * allows, and refund.lua reads and writes it with the same helpers (algorithms/bucket.lua, composed into both).
 */
class CompactStateTest {

    private final RedissonClient client = Stores.client();

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aBucketIsOneShortEmbeddedString(Algorithm algorithm) {
        // the benchmarks' limit, a few usual ones, and one whose units pass 2^32 (a token every 4.8
        // hours: perToken and the debt take 9 bytes each, and a burst of 1,000 three). The key lives
        // only until the bucket is full again, so each limit's three tokens must take far longer to
        // come back than a pause of a loaded machine: 10 a minute (18 s) stores the same sizes as 10 a
        // second would (0.3 s), and none here lives less than 10 s.
        List<Limit> limits = List.of(Limit.of("bytes", 100, Duration.ofHours(1)), Limit.of("bytes", "10/1m"),
                Limit.of("bytes", "1000/1h").withBurst(50), Limit.of("bytes", 7, Duration.ofMinutes(3)).withBurst(9),
                Limit.of("bytes", 5, Duration.ofDays(1)).withBurst(100),
                Limit.of("bytes", 5, Duration.ofDays(1)).withBurst(1000));
        for (Limit limit : limits) {
            Limit bucket = limit.withAlgorithm(algorithm);
            RateLimiter limiter = RateLimiter.builder().limit(bucket).store(RedisStore.of(client)).build();
            String caller = "bytes-" + UUID.randomUUID();
            for (int i = 0; i < 3; i++) {
                assertThat(limiter.decide(caller).allowed()).isTrue();
            }
            String key = LimitKeys.key(caller, bucket);
            int length = StoredState.raw(client, key).length;
            assertThat(length).as("%s: bytes of value", bucket)
                    .isLessThanOrEqualTo(bucket.capacity() == 1000 ? 29 : 28);
            if (limit.periodMicros() == 3_600_000_000L && limit.count() == 100) {
                // 7 bytes of time, then debt and perToken 36,000,000 (5 bytes each), perMicro 1, burst 100
                assertThat(length).isEqualTo(19);
            }
            assertThat(encoding(key)).as("%s", bucket).isEqualTo("embstr");
            assertThat(StoredState.read(client, key).burst()).isEqualTo(bucket.capacity());
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void theLargestUnitsStayExactAndEmbedded(Algorithm algorithm) {
        // 7 per 365 days, burst 70: perToken 3.2e13 (over 2^32) and a capacity near 2^51 (the
        // largest a limit may have); then a change to other units as large, carried over
        List<Limit> phases = List.of(Limit.of("huge", 7, Duration.ofDays(365)).withBurst(70),
                Limit.of("huge", 3, Duration.ofDays(365)).withBurst(40));
        ManualClock clock = new ManualClock(ManualClock.ALIGNED_START);
        RateLimitStore memory = Stores.MEMORY.create(clock);
        RateLimitStore redis = Stores.REDIS.create(clock);
        SplittableRandom random = new SplittableRandom(14);
        String caller = "huge-" + UUID.randomUUID();
        String key = Keys.key(caller, "huge", LimitKeys.suffix(algorithm));
        List<Decision> seen = new ArrayList<>();
        for (int step = 0; step < 120; step++) {
            Limit limit = phases.get(step < 60 ? 0 : 1).withAlgorithm(algorithm).withCost(1 + random.nextInt(10));
            clock.advance(Duration.ofMinutes(random.nextInt(30 * 24 * 60)));
            Decision expected = memory.decide(caller, List.of(limit)).toCompletableFuture().join();
            Decision actual = redis.decide(caller, List.of(limit)).toCompletableFuture().join();
            assertThat(actual).as("step %d", step).isEqualTo(expected);
            seen.add(actual);
            if (random.nextInt(4) == 0) {
                memory.refund(caller, List.of(limit)).toCompletableFuture().join();
                redis.refund(caller, List.of(limit)).toCompletableFuture().join();
            }
            if (StoredState.isCurrent(client, key)) {
                assertThat(StoredState.raw(client, key).length).isLessThanOrEqualTo(44);
                assertThat(encoding(key)).isEqualTo("embstr");
            }
        }
        assertThat(seen).as("both refused and admitted")
                .anyMatch(Decision::allowed).anyMatch(decision -> !decision.allowed());
        StoredState.State state = StoredState.read(client, key);
        assertThat(state.perToken()).isGreaterThan(1L << 32);
        assertThat(state.time()).isGreaterThan(ManualClock.ALIGNED_START);
    }

    /**
     * refund.lua reads and writes the bucket's state as decide.lua does: a refund gives back its
     * cost and leaves the same binary form with the key's TTL; under a changed limit (a state
     * written under other units) it refunds nothing.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA"})
    void aRefundGivesBackItsCostInTheSameFormAndKeepsTheTtl(Algorithm algorithm) {
        for (boolean changed : new boolean[] {false, true}) {
            ManualClock clock = new ManualClock();
            DecideScript script = new DecideScript(new RedissonCalls(client), clock);
            LeaseScripts refunds = new LeaseScripts(new RedissonCalls(client), clock);
            List<Limit> before =
                    List.of(Limit.of("rfmt", 7, Duration.ofMinutes(3)).withBurst(9).withAlgorithm(algorithm));
            List<Limit> after = changed
                    ? List.of(Limit.of("rfmt", 5, Duration.ofMinutes(2)).withBurst(4).withAlgorithm(algorithm))
                    : before;
            String caller = "rfmt-" + UUID.randomUUID();
            script.decide(caller, before, 6).join().apply(0);
            String key = LimitKeys.key(caller, before.get(0));
            clock.advance(Duration.ofSeconds(5));
            byte[] stateBefore = StoredState.raw(client, key);
            long ttlBefore = client.getBucket(key, StringCodec.INSTANCE).remainTimeToLive();

            refunds.refund(new StorageKey(caller, after)).join();

            long ttl = client.getBucket(key, StringCodec.INSTANCE).remainTimeToLive();
            assertThat(ttl).as("keeps a TTL (changed %s)", changed).isPositive().isLessThanOrEqualTo(ttlBefore);
            assertThat(StoredState.isCurrent(client, key)).as("the binary form").isTrue();
            if (changed) {
                assertThat(StoredState.raw(client, key)).as("other units: nothing refunded").isEqualTo(stateBefore);
            } else {
                assertThat(StoredState.raw(client, key)).as("refunded").isNotEqualTo(stateBefore);
                // 9 - 6 spent, plus 5 s of refill at 7 per 3 min (none whole yet), plus 1 refunded, less 1 now
                assertThat(script.decide(caller, after, 1).join().apply(0).quotas().get(0).remaining()).isEqualTo(3);
            }
        }
    }

    private String encoding(String key) {
        return client.getScript(StringCodec.INSTANCE).eval(key, RScript.Mode.READ_ONLY,
                "return redis.call('OBJECT', 'ENCODING', KEYS[1])", RScript.ReturnType.VALUE, List.of(key));
    }
}
