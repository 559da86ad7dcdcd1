package dev.sluice;

import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every key the scripts write has a TTL no longer than it needs, and no key is longer than
 * 256 bytes, whatever the caller identity.
 */
class HygieneTest {

    @Test
    void everyKeyHasATtlAndABoundedName() {
        RedissonClient client = Stores.client();
        RateLimiter limiter = RateLimiter.builder()
                .limit(Limit.of("hygiene-tb", "10/s"))
                .limit(Limit.of("hygiene-gcra", "10/1m").withAlgorithm(Algorithm.GCRA))
                .limit(Limit.of("hygiene-sw", "10/1h").withAlgorithm(Algorithm.SLIDING_WINDOW))
                .limit(Limit.of("hygiene-fw", "10/1d").withAlgorithm(Algorithm.FIXED_WINDOW))
                .limit(Limit.of("hygiene-sl", "10/500ms").withAlgorithm(Algorithm.SLIDING_LOG))
                .store(RedisStore.of(client)).timeout(Stores.PATIENT).build();
        String run = UUID.randomUUID().toString();
        List<String> callers = List.of(run, run + "-" + "x".repeat(8_192), run + "{slot}", run + "\r\nSET x y",
                run + "\u0000\u00ff\ud83d\ude00", run + " spaces and : colons");
        for (String caller : callers) {
            for (int i = 0; i < 12; i++) {
                assertThat(limiter.decide(caller).storeFailed()).isFalse();
            }
        }

        List<String> keys = TestRedis.sluiceKeys(client);
        // Every caller's keys of the limits that outlive a paused JVM are there to be checked; the
        // token bucket's (1 s) and the log's (500 ms) may have expired by the scan on a loaded machine.
        for (String lasting : List.of("hygiene-gcra", "hygiene-sw", "hygiene-fw")) {
            assertThat(keys.stream().filter(key -> key.contains(":" + lasting + ":"))).as(lasting + " keys")
                    .hasSizeGreaterThanOrEqualTo(callers.size());
        }
        for (String key : keys) {
            assertThat(key.getBytes(StandardCharsets.UTF_8).length).as(key).isLessThanOrEqualTo(256);
            long ttl = client.getBucket(key).remainTimeToLive();
            if (ttl == -2) {
                // Gone since the SCAN: a key of an earlier test in this JVM whose short TTL ran out
                // meanwhile (seen on a loaded machine). A key without a TTL answers -1 and fails.
                continue;
            }
            assertThat(ttl).as("TTL of " + key).isPositive();
        }
        // the returned slots of a bucket (tb:slots, gcra:slots): kept no longer than the schedule
        // they lie in, which here ends within three periods
        for (Limit limit : List.of(Limit.of("hygiene-slots-tb", "10/1m").withBurst(1),
                Limit.of("hygiene-slots-gcra", "10/1m").withBurst(1).withAlgorithm(Algorithm.GCRA))) {
            RedisStore store = RedisStore.of(client);
            List<RateLimitStore.Booking> booked = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                booked.add(store.book(run, List.of(limit), Duration.ofMinutes(1)).toCompletableFuture().join());
            }
            store.giveBack(run, List.of(limit), booked.get(1)).toCompletableFuture().join();
            List<String> slots = TestRedis.sluiceKeys(client).stream()
                    .filter(key -> key.contains(":" + limit.policy() + ":") && key.endsWith(":slots")).toList();
            assertThat(slots).as("the returned slots of " + limit).hasSize(1);
            assertThat(client.getBucket(slots.get(0)).remainTimeToLive()).as("TTL of " + slots.get(0))
                    .isPositive().isLessThanOrEqualTo(3 * 6_000L);
            assertThat(slots.get(0).getBytes(StandardCharsets.UTF_8).length).as(slots.get(0)).isLessThanOrEqualTo(256);
        }
        Map<String, Long> periodMillis = Map.of("tb", 1_000L, "gcra", 60_000L, "sw", 3_600_000L, "fw", 86_400_000L,
                "sl", 500L);
        for (String key : keys) {
            if (key.contains(":hygiene-") && !key.contains(":hygiene-slots-")) {
                String suffix = key.substring(key.lastIndexOf(':') + 1);
                assertThat(client.getBucket(key).remainTimeToLive()).as("TTL of " + key + ", at most twice the period")
                        .isLessThanOrEqualTo(2 * periodMillis.get(suffix));
                assertThat(key).as("the hash tag is the caller or its hash, never raw input")
                        .matches("sluice:\\{[A-Za-z0-9._@~#-]{1,64}}:hygiene-[a-z]+:[a-z]+");
            }
        }
    }
}
