package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.ConcurrencyLimiter;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.StallingProxy;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Redis store on its unhappy paths: a slow Redis, state that changed behind the store's back,
 * state written under another limit, and callers that block in their continuations. Each test is
 * named after the defect it pins down.
 */
class UnhappyPathsTest {

    private static RedissonClient client(String url, int connections, int nettyThreads) {
        Config config = new Config();
        config.setNettyThreads(nettyThreads);
        config.useSingleServer().setAddress(url).setTimeout(5_000).setRetryAttempts(0)
                .setConnectionMinimumIdleSize(connections).setConnectionPoolSize(connections)
                .setSubscriptionConnectionMinimumIdleSize(0).setSubscriptionConnectionPoolSize(1);
        return Redisson.create(config);
    }

    /**
     * With Redis answering in 0.6 x the timeout, a request queued behind its caller's call in
     * flight used to wait for that call and then for its own: it timed out before it was sent, so
     * the hottest caller went through uncharged while a quiet one was decided.
     */
    @Test
    void aHotCallerIsDecidedByRedisAsOftenAsAQuietOneWhenRedisIsSlow() throws Exception {
        try (StallingProxy proxy = new StallingProxy(TestRedis.shared().port())) {
            RedissonClient slow = client(proxy.url(), 24, 4);
            try {
                RedisStore store = RedisStore.builder().client(slow).localRejections(0).build();
                Limit limit = Limit.of("slow", 1_000_000, Duration.ofMinutes(1));
                RateLimiter hot = RateLimiter.builder().limit(limit).store(store).failureMode(FailureMode.CLOSED)
                        .timeout(Duration.ofMillis(250)).build();
                RateLimiter quiet = RateLimiter.builder().limit(limit).store(store).failureMode(FailureMode.CLOSED)
                        .timeout(Duration.ofMillis(250)).build();
                String hotCaller = "hot-" + UUID.randomUUID();
                String quietCaller = "quiet-" + UUID.randomUUID();
                hot.decide(hotCaller);
                quiet.decide(quietCaller);
                proxy.delayReplies(150);
                for (int i = 0; i < 8; i++) {
                    hot.decide(hotCaller); // the store learns how slow Redis is
                }

                AtomicInteger hotDecided = new AtomicInteger();
                AtomicInteger hotTotal = new AtomicInteger();
                AtomicInteger quietDecided = new AtomicInteger();
                AtomicInteger quietTotal = new AtomicInteger();
                ExecutorService pool = Executors.newFixedThreadPool(17);
                CountDownLatch go = new CountDownLatch(1);
                try {
                    List<Future<?>> runs = new ArrayList<>();
                    for (int t = 0; t < 16; t++) {
                        runs.add(pool.submit(() -> decideRepeatedly(go, hot, hotCaller, hotDecided, hotTotal)));
                    }
                    runs.add(pool.submit(() -> decideRepeatedly(go, quiet, quietCaller, quietDecided, quietTotal)));
                    go.countDown();
                    for (Future<?> run : runs) {
                        run.get(60, TimeUnit.SECONDS);
                    }
                } finally {
                    pool.shutdownNow();
                }
                double hotShare = (double) hotDecided.get() / hotTotal.get();
                double quietShare = (double) quietDecided.get() / quietTotal.get();
                assertThat(hotShare)
                        .as("share of the hot caller's %d requests decided by Redis (quiet caller: %.2f of %d)",
                        hotTotal.get(), quietShare, quietTotal.get()).isGreaterThanOrEqualTo(quietShare - 0.05);
                assertThat(quietShare).as("a quiet caller at 0.6 x the timeout is decided").isGreaterThan(0.5);
            } finally {
                slow.shutdown();
            }
        }
    }

    /** Connects a store's client (through a proxy, on a busy machine) with no deadline to speak of. */
    private static void connect(RedisStore store) {
        Decision first = RateLimiter.builder().limit(Limit.of("connect", "1000/1s")).store(store)
                .timeout(Stores.PATIENT)
                .build().decide("connect-" + UUID.randomUUID());
        assertThat(first.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
    }

    private static Void decideRepeatedly(CountDownLatch go, RateLimiter limiter, String caller, AtomicInteger decided,
                                         AtomicInteger total) throws InterruptedException {
        go.await();
        for (int i = 0; i < 12; i++) {
            Decision decision = limiter.decide(caller);
            total.incrementAndGet();
            if (!decision.storeFailed()) {
                decided.incrementAndGet();
            }
        }
        return null;
    }

    /** A stalled call that held 40 coalesced requests used to count as 40 failures and open the circuit. */
    @Test
    void requestsThatFailTogetherCountOnceTowardTheCircuitBreaker() throws Exception {
        try (StallingProxy proxy = new StallingProxy(TestRedis.shared().port())) {
            RedissonClient stalled = client(proxy.url(), 4, 2);
            try {
                RedisStore store = RedisStore.of(stalled);
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("together", "100/1m"))
                        .store(store).failureMode(FailureMode.CLOSED)
                        .timeout(Duration.ofMillis(200)).build();
                String caller = "together-" + UUID.randomUUID();
                connect(store);
                proxy.stall();
                List<CompletableFuture<Decision>> together = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    together.add(limiter.decideAsync(caller).toCompletableFuture());
                }
                for (CompletableFuture<Decision> decision : together) {
                    assertThat(decision.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                }
                assertThat(limiter.storeCircuitOpen()).as("one failed call is one failure").isFalse();

                for (int i = 0; i < 5; i++) {
                    assertThat(limiter.decide(caller).outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                }
                assertThat(limiter.storeCircuitOpen()).as("five more, one after another, open it").isTrue();
            } finally {
                proxy.release();
                stalled.shutdown();
            }
        }
    }

    /** After a {@code DEL} every JVM used to answer 429 from its local copy until the old retry-after (a day). */
    @Test
    void aLocalRejectionOutlivesADeletedStateByAtMostOneSecond() {
        ManualClock clock = new ManualClock();
        RedisStore store = RedisStore.forTesting(Stores.client(), clock);
        RateLimiter limiter = RateLimiter.builder()
                .limit(Limit.of("daily", "3/1d").withAlgorithm(Algorithm.FIXED_WINDOW))
                .store(store).timeout(Stores.PATIENT).build();
        String caller = "deleted-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.decide(caller).allowed()).isTrue();
        }
        assertThat(limiter.decide(caller).allowed()).isFalse();
        Stores.client().getKeys().delete(TestRedis.sluiceKeys(Stores.client()).stream()
                .filter(key -> key.contains(caller)).toArray(String[]::new));

        clock.advance(Duration.ofMillis(999));
        assertThat(limiter.decide(caller).allowed()).as("still the local copy").isFalse();
        clock.advance(Duration.ofMillis(1));
        assertThat(limiter.decide(caller).allowed()).as("a second later Redis decides: the state is gone").isTrue();
    }

    @Test
    void theLocalCopyOfARejectionLastsAsLongAsConfigured() {
        ManualClock clock = new ManualClock();
        RedisStore store = RedisStore.builder().client(Stores.client()).timeSourceForTesting(clock)
                .localRejectionTtl(Duration.ofMillis(100)).build();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("short-copy", "1/1h")).store(store)
                .timeout(Stores.PATIENT).build();
        String caller = "short-copy-" + UUID.randomUUID();
        assertThat(limiter.decide(caller).allowed()).isTrue();
        assertThat(limiter.decide(caller).allowed()).isFalse();
        limiter.reset(caller);
        assertThat(limiter.decide(caller).allowed()).as("reset clears this JVM's copy too").isTrue();
        assertThat(limiter.decide(caller).allowed()).isFalse();
        Stores.client().getKeys().delete(TestRedis.sluiceKeys(Stores.client()).stream()
                .filter(key -> key.contains(caller)).toArray(String[]::new));
        clock.advance(Duration.ofMillis(100));
        assertThat(limiter.decide(caller).allowed()).isTrue();
    }

    /** A probe answered from the local rejection copy used to close the circuit without asking Redis. */
    @Test
    void theCircuitBreakersProbeAsksRedisNotTheLocalCopy() throws Exception {
        try (StallingProxy proxy = new StallingProxy(TestRedis.shared().port())) {
            RedissonClient stalled = client(proxy.url(), 4, 2);
            try {
                RedisStore store = RedisStore.of(stalled);
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("probe", "1/1h")).store(store)
                        .failureMode(FailureMode.CLOSED).timeout(Duration.ofMillis(150)).build();
                String rejected = "probe-" + UUID.randomUUID();
                connect(store);
                assertThat(limiter.decide(rejected).allowed()).isTrue();
                assertThat(limiter.decide(rejected).outcome()).isEqualTo(Decision.Outcome.REJECTED); // copied locally
                proxy.stall();
                for (int i = 0; i < 5; i++) {
                    assertThat(limiter.decide("probe-other-" + i).outcome()).isEqualTo(Decision.Outcome.FAILED_CLOSED);
                }
                assertThat(limiter.storeCircuitOpen()).isTrue();
                Thread.sleep(300); // past the circuit's first pause: the next decision is the probe
                assertThat(limiter.decide(rejected).outcome()).as("the probe waited for Redis")
                        .isEqualTo(Decision.Outcome.FAILED_CLOSED);
                assertThat(limiter.storeCircuitOpen()).as("a stalled Redis keeps the circuit open").isTrue();
            } finally {
                proxy.release();
                stalled.shutdown();
            }
        }
    }

    /**
     * State written under a larger fixed window made the script answer a negative remaining; the
     * decision threw in the reply path, the coalesced batch stayed registered and every later
     * request of that caller queued on it until its timeout.
     */
    @Test
    void aLoweredLimitNeverWedgesACaller() throws Exception {
        RedisStore store = RedisStore.of(Stores.client());
        String caller = "lowered-" + UUID.randomUUID();
        RateLimiter before = RateLimiter.builder()
                .limit(Limit.of("lowered", "1000/1d").withAlgorithm(Algorithm.FIXED_WINDOW))
                .store(store).timeout(Stores.PATIENT).build();
        for (int i = 0; i < 8; i++) {
            assertThat(before.decide(caller).allowed()).isTrue();
        }
        RateLimiter after = RateLimiter.builder()
                .limit(Limit.of("lowered", "5/1d").withAlgorithm(Algorithm.FIXED_WINDOW))
                .store(store).failureMode(FailureMode.CLOSED).timeout(Duration.ofSeconds(2)).build();
        List<CompletableFuture<Decision>> concurrent = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            concurrent.add(after.decideAsync(caller).toCompletableFuture());
        }
        for (CompletableFuture<Decision> decision : concurrent) {
            Decision decided = decision.get(10, TimeUnit.SECONDS);
            assertThat(decided.outcome()).isEqualTo(Decision.Outcome.REJECTED);
            assertThat(decided.remaining()).isZero();
        }
        assertThat(store.requestsInFlight()).as("batches still registered").isZero();
        assertThat(after.storeFailures()).isZero();
    }

    /**
     * A key of one caller holding another type (written by something else in the namespace) made
     * every decision of that caller a store failure, counted toward the circuit breaker: five of
     * them opened the circuit, and every other caller of the limiter was then failed too, without
     * the store being asked. The caller whose state is unreadable follows the failure mode alone.
     */
    @Test
    void aCallerWhoseKeyHoldsAnotherTypeFailsAloneAndNeverOpensTheCircuit() {
        RedissonClient redis = Stores.client();
        Limit limit = Limit.of("wrong-type", "5/1m");
        RateLimiter limiter = RateLimiter.builder().limit(limit)
                .store(RedisStore.builder().client(redis).localRejections(0).build())
                .failureMode(FailureMode.CLOSED).timeout(Stores.PATIENT).build();
        String bad = "wrong-type-" + UUID.randomUUID();
        String badKey = dev.sluice.internal.Keys.key(dev.sluice.internal.Keys.tag(bad), limit.policy(), "tb");
        redis.getList(badKey, org.redisson.client.codec.StringCodec.INSTANCE).add("not a bucket");
        redis.getKeys().expire(badKey, 60, TimeUnit.SECONDS);
        for (int i = 0; i < 2 * 5; i++) {
            assertThat(limiter.decide(bad).outcome()).as("the unreadable caller, %d", i)
                    .isEqualTo(Decision.Outcome.FAILED_CLOSED);
        }
        assertThat(limiter.storeFailures()).isEqualTo(10);
        assertThat(limiter.storeCircuitOpen()).as("the circuit every caller shares").isFalse();
        assertThat(limiter.decide("wrong-type-other-" + UUID.randomUUID()).outcome())
                .isEqualTo(Decision.Outcome.ALLOWED);

        Limit cap = Limit.concurrency("wrong-type-cap", 2, Duration.ofSeconds(30));
        ConcurrencyLimiter capped = ConcurrencyLimiter.builder().limit(cap).store(RedisStore.of(redis))
                .failureMode(FailureMode.CLOSED).timeout(Stores.PATIENT).build();
        String capKey = dev.sluice.internal.Keys.key(dev.sluice.internal.Keys.tag(bad), cap.policy(), "cc");
        redis.getBucket(capKey, org.redisson.client.codec.StringCodec.INSTANCE)
                .set("not a set of leases", Duration.ofSeconds(60));
        for (int i = 0; i < 2 * 5; i++) {
            assertThat(capped.acquire(bad).decision().outcome()).as("the unreadable caller's lease, %d", i)
                    .isEqualTo(Decision.Outcome.FAILED_CLOSED);
        }
        assertThat(capped.storeFailures()).isEqualTo(10);
        assertThat(capped.acquire("wrong-type-other-" + UUID.randomUUID()).decision().outcome())
                .as("another caller: the circuit is closed").isEqualTo(Decision.Outcome.ALLOWED);
    }

    /**
     * A user's blocking continuation of {@code decideAsync} used to run on Redisson's event loop
     * (stalling Redis I/O for everyone) or on the one timer thread (delaying every other timeout).
     */
    @Test
    void aContinuationThatBlocksDelaysNoOtherDecision() throws Exception {
        try (StallingProxy proxy = new StallingProxy(TestRedis.shared().port())) {
            RedissonClient oneLoop = client(proxy.url(), 2, 1); // one event loop for all of Redisson's I/O
            try {
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("continuation", "100/1m"))
                        .store(RedisStore.of(oneLoop)).timeout(Duration.ofSeconds(5)).build();
                limiter.decide("warm-up");
                proxy.delayReplies(100); // the continuation is attached before the answer comes
                assertABlockingContinuationDelaysNoOtherDecision(limiter, Decision.Outcome.ALLOWED);
            } finally {
                oneLoop.shutdown();
            }
        }
    }

    @Test
    void aBlockingContinuationOfATimedOutDecisionDelaysNoOtherTimeout() throws Exception {
        try (StallingProxy proxy = new StallingProxy(TestRedis.shared().port())) {
            RedissonClient stalled = client(proxy.url(), 4, 2);
            try {
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("timer", "100/1m"))
                        .store(RedisStore.of(stalled))
                        .failureMode(FailureMode.OPEN).timeout(Duration.ofMillis(100)).build();
                limiter.decide("warm-up");
                proxy.stall();
                assertABlockingContinuationDelaysNoOtherDecision(limiter, Decision.Outcome.FAILED_OPEN);
            } finally {
                proxy.release();
                stalled.shutdown();
            }
        }
    }

    /** One decision's continuation sleeps a second; another decision meanwhile takes well under that. */
    private static void assertABlockingContinuationDelaysNoOtherDecision(RateLimiter limiter, Decision.Outcome expected)
            throws Exception {
        CountDownLatch blocking = new CountDownLatch(1);
        CompletableFuture<Decision> sleeper = limiter.decideAsync("sleeper-" + UUID.randomUUID())
                .thenApply(decision -> {
                    blocking.countDown();
                    sleep(1_000);
                    return decision;
                }).toCompletableFuture();
        assertThat(blocking.await(5, TimeUnit.SECONDS)).isTrue();
        long started = System.nanoTime();
        Decision other = limiter.decideAsync("other-" + UUID.randomUUID()).toCompletableFuture()
                .get(5, TimeUnit.SECONDS);
        assertThat(other.outcome()).isEqualTo(expected);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("another decision, meanwhile")
                .isLessThan(Duration.ofMillis(600));
        sleeper.get(5, TimeUnit.SECONDS);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
