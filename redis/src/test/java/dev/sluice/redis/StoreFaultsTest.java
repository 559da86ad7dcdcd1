package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.Resp;
import dev.sluice.testing.StallingProxy;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a decision does when Redis misbehaves: answers late or never, runs out of memory, is not
 * there at start-up. Every case runs against real redis-server processes on loopback.
 */
class StoreFaultsTest {

    private static TestRedis redis;

    @BeforeAll
    static void start() {
        redis = TestRedis.start();
    }

    @AfterAll
    static void stop() {
        redis.stop();
    }

    private static RedissonClient client(String url, int timeoutMillis, int retryAttempts) {
        Config config = new Config();
        config.useSingleServer().setAddress(url).setTimeout(timeoutMillis).setRetryAttempts(retryAttempts)
                .setRetryInterval(100).setConnectionMinimumIdleSize(1).setConnectionPoolSize(4)
                .setSubscriptionConnectionMinimumIdleSize(0).setSubscriptionConnectionPoolSize(1);
        return Redisson.create(config);
    }

    private static RateLimiter limiter(RedisStore store, String policy, FailureMode mode, long timeoutMillis) {
        return RateLimiter.builder().limit(Limit.of(policy, "10/1m")).store(store).failureMode(mode)
                .timeout(Duration.ofMillis(timeoutMillis)).build();
    }

    @Test
    void aRedisThatNeverAnswersCostsEachDecisionAtMostTheTimeoutThenNothing() throws Exception {
        try (StallingProxy proxy = new StallingProxy(redis.port())) {
            RedissonClient client = client(proxy.url(), 3_000, 0);
            try {
                RedisStore store = RedisStore.of(client);
                RateLimiter closed = limiter(store, "stall", FailureMode.CLOSED, 150);
                String caller = "stall-" + UUID.randomUUID();
                // Connects (through the proxy) without a deadline: a busy machine may take longer than 150 ms.
                assertThat(limiter(store, "stall", FailureMode.CLOSED, 20_000).decide(caller).outcome())
                        .isEqualTo(Decision.Outcome.ALLOWED);
                proxy.stall();

                ExecutorService pool = Executors.newFixedThreadPool(8);
                try {
                    List<Future<Long>> took = new ArrayList<>();
                    for (int i = 0; i < 8; i++) {
                        took.add(pool.submit(() -> {
                            long started = System.nanoTime();
                            Decision decision = closed.decide(caller);
                            assertThat(decision.outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                            return (System.nanoTime() - started) / 1_000_000;
                        }));
                    }
                    for (Future<Long> millis : took) {
                        assertThat(millis.get(5, TimeUnit.SECONDS)).as("ms one decision took").isLessThan(1_000);
                    }
                } finally {
                    pool.shutdownNow();
                }
                assertThat(closed.storeCircuitOpen()).as("eight requests failing together are one failure").isFalse();
                for (int i = 0; i < 4; i++) {
                    assertThat(closed.decide(caller).outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                }
                assertThat(closed.storeCircuitOpen()).as("five failures in a row open the circuit").isTrue();
                long started = System.nanoTime();
                for (int i = 0; i < 50; i++) {
                    assertThat(closed.decide(caller).outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                }
                assertThat((System.nanoTime() - started) / 1_000_000).as("50 decisions with the circuit open, ms")
                        .isLessThan(150 * 3);

                proxy.release();
                Decision resumed = pollUntilDecided(closed, caller);
                assertThat(resumed.outcome()).isIn(Decision.Outcome.ALLOWED, Decision.Outcome.REJECTED);
                assertThat(closed.storeCircuitOpen()).isFalse();
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void aReplyArrivingAfterTheTimeoutChargesTheCallerOnce() throws Exception {
        try (StallingProxy proxy = new StallingProxy(redis.port())) {
            // A client configured to retry, as applications often are: Sluice must not let it re-send.
            RedissonClient slow = client(proxy.url(), 300, 3);
            RedissonClient direct = client(redis.url(), 3_000, 0);
            try {
                String caller = "once-" + UUID.randomUUID();
                RedisStore slowStore = RedisStore.builder().client(slow).localRejections(0).build();
                RateLimiter warmUp = limiter(slowStore, "charge", FailureMode.CLOSED, 20_000);
                RateLimiter through = limiter(slowStore, "charge", FailureMode.OPEN, 100);
                RateLimiter check = limiter(RedisStore.of(direct), "charge", FailureMode.CLOSED, 20_000);
                assertThat(warmUp.decide(caller).outcome()).isEqualTo(Decision.Outcome.ALLOWED); // connects
                proxy.delayReplies(1_000);
                assertThat(through.decide(caller).outcome()).isEqualTo(Decision.Outcome.FAILED_OPEN);
                Thread.sleep(2_500); // longer than Redisson's timeout plus all its retry intervals
                Decision after = check.decide(caller);
                assertThat(after.remaining()).as("two decisions ran, each charged once, then this one").isEqualTo(7);
            } finally {
                slow.shutdown();
                direct.shutdown();
            }
        }
    }

    @Test
    void outOfMemoryFollowsTheFailureModeNeverASilentAllowOnAClosedRoute() {
        TestRedis small = TestRedis.start("maxmemory-policy noeviction");
        try {
            Resp.call(small.port(), "SET", "ballast", "x".repeat(4 * 1024 * 1024));
            Resp.call(small.port(), "CONFIG", "SET", "maxmemory", "1mb");
            try (RedisStore store = RedisStore.connect(small.url())) {
                Decision closed = limiter(store, "oom", FailureMode.CLOSED, 2_000).decide("oom-" + UUID.randomUUID());
                Decision open = limiter(store, "oom", FailureMode.OPEN, 2_000).decide("oom-" + UUID.randomUUID());
                assertThat(closed.outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                assertThat(open.outcome()).isEqualTo(Decision.Outcome.FAILED_OPEN);
            }
        } finally {
            small.stop();
        }
    }

    @Test
    void aStoreThatIsDownAtStartUpIsUsedOnceRedisAppears() {
        int port = TestRedis.freePort();
        try (RedisStore store = RedisStore.connect("redis://127.0.0.1:" + port)) {
            RateLimiter limiter = limiter(store, "late", FailureMode.CLOSED, 300);
            String caller = "late-" + UUID.randomUUID();
            assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
            TestRedis late = TestRedis.start(port);
            try {
                Decision decided = pollUntilDecided(limiter, caller);
                assertThat(decided.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
                assertThat(decided.remaining()).isEqualTo(9);
            } finally {
                late.stop();
            }
        }
    }

    /** Decides every 50 ms until the store answers, for at most 20 s. */
    private static Decision pollUntilDecided(RateLimiter limiter, String caller) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        Decision decision = limiter.decide(caller);
        while (decision.storeFailed() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            decision = limiter.decide(caller);
        }
        return decision;
    }
}
