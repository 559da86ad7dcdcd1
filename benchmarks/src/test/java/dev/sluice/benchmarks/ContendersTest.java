package dev.sluice.benchmarks;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A smoke test, not a benchmark: every contender the harness measures really decides, on a real
 * Redis, and the floor script counts correctly. Guards against measuring a broken contender
 * (one that throws, or fails open and looks fast). Takes a second or two; times nothing.
 */
class ContendersTest {

    private static RedissonClient client;

    @BeforeAll
    static void connect() {
        client = BenchRedis.get().newClient();
    }

    @AfterAll
    static void disconnect() {
        client.shutdown();
    }

    @Test
    void everyRedisContenderAdmitsUpToItsLimitThenRejects() throws Exception {
        for (String name : RedisContender.NAMES) {
            String[] keys = {"smoke-" + name + "-" + System.nanoTime()};
            try (RedisContender contender = RedisContender.create(name, client, keys, 3, Duration.ofHours(1))) {
                assertThat(contender.decide(0)).as(name).isTrue();
                assertThat(contender.decideAsync(0).get(5, TimeUnit.SECONDS)).as(name).isTrue();
                assertThat(contender.decide(0)).as(name).isTrue();
                assertThat(contender.decide(0)).as(name + " after its limit").isFalse();
                assertThat(contender.failures()).as(name).isZero();
                assertThat(BenchRedis.get().command("EXISTS", contender.redisKey(0))).as(name + " key").isEqualTo("1");
            }
        }
    }

    @Test
    void everyMemoryContenderAdmitsOnTheAllowedPathAndRejectsOnTheOther() {
        for (String name : MemoryBenchmark.NAMES) {
            assertThat(MemoryBenchmark.create(name, true).getAsBoolean()).as(name).isTrue();
            var rejected = MemoryBenchmark.create(name, false);
            assertThat(rejected.getAsBoolean()).as(name + " first").isTrue();
            assertThat(rejected.getAsBoolean()).as(name + " second").isFalse();
        }
    }
}
