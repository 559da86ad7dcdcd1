package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.api.RScript;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.client.codec.StringCodec;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Redis store's own promises: script caching, the server's clock, failures, configuration. */
class RedisStoreTest {

    private final RedissonClient client = Stores.client();

    @Test
    void connectingLeavesNoNettyStateOnTheCallingThread() throws Exception {
        // netty keeps a map in a plain ThreadLocal of any thread that creates a client: on a
        // container's deployment thread it would pin the application's class loader (RedeployIT).
        Object[] seen = {"not run"};
        Thread deployer = new Thread(() -> {
            RedisStore store = RedisStore.connect(TestRedis.shared().url());
            try {
                seen[0] = io.netty.util.internal.InternalThreadLocalMap.getIfSet();
            } finally {
                store.close();
            }
        });
        deployer.start();
        deployer.join();
        assertThat(seen[0]).isNull();
    }

    @Test
    void aFlushedScriptCacheIsReloadedWithoutAFailure() {
        // scripts, not functions, on a Redis 7 too: a flushed library is RedisFunctionsTest's
        RedisStore store = RedisStore.builder().client(client).functions(false).build();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("flush", "10/1m")).store(store)
                .failureMode(FailureMode.CLOSED).timeout(Duration.ofSeconds(5)).build();
        String caller = "flush-" + UUID.randomUUID();
        assertThat(limiter.decide(caller).remaining()).isEqualTo(9);
        client.getScript().scriptFlush();
        assertThat(client.getScript().scriptExists(DecideScript.SHA)).containsExactly(false);

        Decision after = limiter.decide(caller);
        assertThat(after.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(after.remaining()).as("charged exactly once across the reload").isEqualTo(8);
        assertThat(client.getScript().scriptExists(DecideScript.SHA)).containsExactly(true);
        assertThat(limiter.storeFailures()).isZero();
    }

    @Test
    void productionDecisionsUseTheServersClockNotTheApplications() {
        // Two nodes whose own clocks are 30 s apart share one bucket; neither clock reaches Redis.
        RateLimiter node = RateLimiter.builder().limit(Limit.of("clock", "2/1m")).store(RedisStore.of(client)).build();
        String caller = "clock-" + UUID.randomUUID();
        assertThat(node.decide(caller).allowed()).isTrue();
        assertThat(node.decide(caller).allowed()).isTrue();
        assertThat(node.decide(caller).allowed()).isFalse();
        String stored = Long.toString(StoredState.bucketTime(client, "sluice:{" + caller + "}:clock:tb"));
        List<Object> time = client.getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_ONLY,
                "local t = redis.call('TIME') return {t[1], t[2]}", RScript.ReturnType.LIST);
        long serverMicros = Long.parseLong(time.get(0).toString()) * 1_000_000 + Long.parseLong(time.get(1).toString());
        assertThat(Long.parseLong(stored)).isBetween(serverMicros - 5_000_000, serverMicros);
    }

    @Test
    void stateWrittenInTheFutureGrantsNothingExtraAndIsNotRewound() {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("future", "10/1m"))
                .store(RedisStore.forTesting(client, clock))
                .build();
        String caller = "future-" + UUID.randomUUID();
        for (int i = 0; i < 10; i++) {
            assertThat(limiter.decide(caller).allowed()).isTrue();
        }
        String key = "sluice:{" + caller + "}:future:tb";
        long written = StoredState.bucketTime(client, key);
        clock.set(clock.nowMicros() - 30_000_000); // a failover to a node 30 s behind
        Decision behind = limiter.decide(caller);
        assertThat(behind.allowed()).isFalse();
        assertThat(behind.retryAfter()).as("the wait counts from the stored time").isEqualTo(Duration.ofSeconds(36));
        assertThat(StoredState.bucketTime(client, key)).isEqualTo(written);
    }

    @Test
    void anUnreachableRedisFollowsTheFailureModeWithinTheTimeout() {
        int closedPort = TestRedis.freePort();
        try (RedisStore store = RedisStore.connect("redis://127.0.0.1:" + closedPort)) {
            for (FailureMode mode : FailureMode.values()) {
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("down", "1/s")).store(store)
                        .failureMode(mode)
                        .timeout(Duration.ofMillis(200)).build();
                long started = System.nanoTime();
                Decision decision = limiter.decide("down");
                long tookMillis = (System.nanoTime() - started) / 1_000_000;
                assertThat(decision.outcome()).isEqualTo(switch (mode) {
                    case OPEN -> Decision.Outcome.FAILED_OPEN;
                    case CLOSED -> Decision.Outcome.FAILED_CLOSED;
                    case LOCAL -> Decision.Outcome.LOCAL_ALLOWED; // the local budget of 1/s is whole
                });
                assertThat(decision.allowed()).isEqualTo(mode != FailureMode.CLOSED);
                assertThat(tookMillis).as("bounded by the timeout").isLessThan(2_000);
                assertThat(limiter.storeFailures()).isEqualTo(1);
            }
        }
    }

    @Test
    void storeValuesAreCheckedNamingTheValue() {
        assertThatThrownBy(() -> RedisStore.config("redisson:/no/such/file.yaml"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'store' names a Redisson YAML file that cannot be read")
                .hasMessageContaining("redisson:/no/such/file.yaml");
        assertThatThrownBy(() -> RedisStore.config("http://127.0.0.1:6379"))
                .hasMessageContaining("'store' must be redis://host:port[/db]");
        assertThat(RedisStore.config("redis://127.0.0.1:6380/3").useSingleServer().getDatabase()).isEqualTo(3);
    }

    @Test
    void everyAlgorithmRunsInOneScriptCall() {
        // Redis counts script calls; one decision of five limits is one EVALSHA (an FCALL on a Redis 7).
        RateLimiter limiter = RateLimiter.builder()
                .limit(Limit.of("one-tb", "5/1m"))
                .limit(Limit.of("one-gcra", "5/1m").withAlgorithm(Algorithm.GCRA))
                .limit(Limit.of("one-sw", "5/1m").withAlgorithm(Algorithm.SLIDING_WINDOW))
                .limit(Limit.of("one-fw", "5/1m").withAlgorithm(Algorithm.FIXED_WINDOW))
                .limit(Limit.of("one-sl", "5/1m").withAlgorithm(Algorithm.SLIDING_LOG))
                .store(RedisStore.of(client)).timeout(Duration.ofSeconds(5)).build();
        String caller = "once-" + UUID.randomUUID();
        limiter.decide(caller); // loads the script if needed
        long before = scriptCalls();
        for (int i = 0; i < 5; i++) {
            assertThat(limiter.decide(caller).storeFailed()).isFalse();
        }
        assertThat(scriptCalls() - before).isEqualTo(5);
    }

    private long scriptCalls() {
        Map<String, String> stats = client.getRedisNodes(RedisNodes.SINGLE).getInstance()
                .info(RedisNode.InfoSection.COMMANDSTATS);
        long calls = 0;
        for (String command : List.of("cmdstat_evalsha", "cmdstat_fcall")) {
            calls += Long.parseLong(stats.getOrDefault(command, "calls=0,").replaceAll("^calls=(\\d+),.*", "$1"));
        }
        return calls;
    }
}
