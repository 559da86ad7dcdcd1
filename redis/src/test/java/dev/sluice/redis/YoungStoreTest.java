package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.Permits;
import dev.sluice.testing.Resp;
import dev.sluice.testing.StallingProxy;
import dev.sluice.testing.TestCluster;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
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
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A store's first seconds: a healthy Redis is never failed open because the store is young. The
 * decisions start the moment the store is built (with no start-up wait at all, and with the
 * default one), inbound (blocking and asynchronous) and outbound (a limiter's acquire and
 * {@link Permits}), for 10 s; none may follow the failure mode. Run it with the machine busy too.
 * A Redis that cannot be reached still gets the failure mode, within the bound.
 */
class YoungStoreTest {

    /** How long after the store is built the decisions go on. */
    private static final long FIRST_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** The most decisions one thread makes, whatever the machine's pace. */
    private static final int MOST_PER_THREAD = 20_000;
    /** The inbound limit: the store decides exactly this many allowed decisions of the caller. */
    private static final int INBOUND_LIMIT = 200;
    /**
     * The limiter's timeout: far above any loopback round trip, so that a decision that follows the
     * failure mode here did so because the store was young, not because a busy machine held a
     * thread back past the usual 100 ms.
     */
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private static TestRedis redis;

    @BeforeAll
    static void start() {
        redis = TestRedis.start();
    }

    @AfterAll
    static void stop() {
        redis.stop();
    }

    /** What the first 10 s got: decisions made by Redis (allowed, refused), grants, and failures. */
    private record Tally(int inboundAllowed, int inboundRefused, int outboundGranted, int failed) {
    }

    /**
     * Starts five threads waiting, builds the store with {@code build}, and has them decide for
     * {@link #FIRST_NANOS} from that moment: one caller's {@code decide} and {@code decideAsync}
     * (sharing {@link #INBOUND_LIMIT}), and outbound, a limiter's {@code acquire},
     * {@code acquireAsync} and a {@link Permits}' {@code acquire} (each of a caller of its own).
     */
    private static Tally firstTenSeconds(Supplier<RedisStore> build) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(5);
        AtomicInteger allowed = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        CountDownLatch waiting = new CountDownLatch(5);
        CountDownLatch go = new CountDownLatch(1);
        RateLimiter[] inbound = new RateLimiter[1];
        RateLimiter[] outbound = new RateLimiter[1];
        Permits[] permits = new Permits[1];
        long[] builtNanos = new long[1];
        String run = UUID.randomUUID().toString();
        RedisStore store = null;
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int t = 0; t < 5; t++) {
                int kind = t;
                runs.add(pool.submit(() -> {
                    waiting.countDown();
                    go.await();
                    for (int i = 0; i < MOST_PER_THREAD && System.nanoTime() - builtNanos[0] < FIRST_NANOS; i++) {
                        Decision decision = switch (kind) {
                            case 0 -> inbound[0].decide("in-" + run);
                            case 1 -> inbound[0].decideAsync("in-" + run).toCompletableFuture()
                                    .get(30, TimeUnit.SECONDS);
                            case 2 -> outbound[0].acquire("out-sync-" + run, Duration.ofSeconds(1));
                            case 3 -> outbound[0].acquireAsync("out-async-" + run, Duration.ofSeconds(1))
                                    .get(30, TimeUnit.SECONDS);
                            default -> permits[0].acquire("out-permits-" + run);
                        };
                        if (decision.storeFailed()) {
                            failed.incrementAndGet();
                        } else if (kind >= 2) {
                            assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
                            granted.incrementAndGet();
                        } else if (decision.allowed()) {
                            allowed.incrementAndGet();
                        } else {
                            refused.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            waiting.await();
            store = build.get();
            builtNanos[0] = System.nanoTime();
            inbound[0] = RateLimiter.builder().limit(Limit.of("young-in", INBOUND_LIMIT, Duration.ofHours(1)))
                    .store(store).failureMode(FailureMode.OPEN).timeout(TIMEOUT).build();
            outbound[0] = RateLimiter.builder().limit(Limit.of("young-out", "20/1s")).store(store)
                    .failureMode(FailureMode.OPEN).timeout(TIMEOUT).build();
            // Lateness is not what this test is about: a busy machine may wake a waiter 100 ms late
            permits[0] = Permits.builder(outbound[0]).maxWait(Duration.ofSeconds(5)).maxLateness(Duration.ofMillis(500))
                    .build();
            go.countDown();
            for (Future<?> each : runs) {
                each.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            if (store != null) {
                store.close();
            }
        }
        return new Tally(allowed.get(), refused.get(), granted.get(), failed.get());
    }

    /** The first 10 s of each kind of store: none failed, the inbound limit spent exactly, outbound served. */
    private static void assertNoneFailed(String store) throws Exception {
        for (Duration wait : List.of(Duration.ZERO, Duration.ofSeconds(2))) {
            Tally tally = firstTenSeconds(() -> RedisStore.builder().connect(store).startupWait(wait).build());
            assertThat(tally.failed())
                    .as("decisions failed open in the first 10 s of a store with start-up wait %s: %s",
                    wait, tally).isZero();
            assertThat(tally.inboundAllowed()).as("inbound decisions allowed by Redis: %s", tally)
                    .isEqualTo(INBOUND_LIMIT);
            assertThat(tally.inboundRefused()).as("inbound decisions refused by Redis: %s", tally).isPositive();
            assertThat(tally.outboundGranted()).as("outbound grants: %s", tally).isPositive();
        }
    }

    @Test
    void aYoungStoreOnOneRedisFailsNoDecision() throws Exception {
        Resp.call(redis.port(), "SCRIPT", "FLUSH"); // a Redis that has never seen the scripts
        assertNoneFailed(redis.url());
    }

    @Test
    void aYoungStoreOnAClusterFailsNoDecision() throws Exception {
        try (TestCluster cluster = new TestCluster(3)) {
            Path yaml = cluster.redissonYaml();
            try {
                assertNoneFailed("redisson:" + yaml);
            } finally {
                Files.deleteIfExists(yaml);
            }
        }
    }

    /**
     * A Redis that accepts connections and is slow to answer (held back until released): an
     * asynchronous decision made meanwhile returns at once, unfinished, blocking no thread, and is
     * decided by Redis once it answers. The client's own timeouts are long, so the store is not
     * unreachable, only young.
     */
    @Test
    void anAsynchronousDecisionWaitsForAYoungStoreWithoutBlocking() throws Exception {
        try (StallingProxy proxy = new StallingProxy(redis.port())) {
            Path yaml = Files.createTempFile("sluice-slow", ".yaml");
            try {
                Files.writeString(yaml, "singleServerConfig:\n  address: \"" + proxy.url() + "\"\n  timeout: 30000\n"
                        + "  retryAttempts: 0\n");
                proxy.stall();
                RedisStore store = RedisStore.builder().connect("redisson:" + yaml).startupWait(Duration.ZERO).build();
                try {
                    // the bound on waiting for the store is the larger of this and its start-up wait (none)
                    RateLimiter limiter = RateLimiter.builder().limit(Limit.of("young-async", "5/1h")).store(store)
                            .timeout(Duration.ofSeconds(20)).build();
                    CompletableFuture<Decision> answer = limiter.decideAsync("slow-" + UUID.randomUUID())
                            .toCompletableFuture();
                    assertThat(answer).as("a decision of a store that has not answered yet").isNotDone();
                    assertThat(store.ready()).isFalse();
                    proxy.release();
                    assertThat(answer.get(30, TimeUnit.SECONDS).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
                } finally {
                    store.close();
                }
            } finally {
                Files.deleteIfExists(yaml);
            }
        }
    }

    /**
     * A healthy Redis whose store's first attempt to connect fails without being refused (here its
     * first connections are dropped; on a busy machine, a cold client missing its own timeouts):
     * that is no proof that Redis cannot be reached, so the decisions made meanwhile wait for the
     * next attempt instead of failing. Only a refusal, or two failed attempts in a row, make the
     * store unreachable.
     */
    @Test
    void aFailedFirstAttemptOnAHealthyRedisFailsNoDecision() throws Exception {
        try (StallingProxy proxy = new StallingProxy(redis.port())) {
            proxy.dropConnections(1_000); // every connection of the first attempt
            RedisStore store = RedisStore.builder().connect(proxy.url()).startupWait(Duration.ZERO).build();
            try {
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("second-try", "5/1h")).store(store)
                        .timeout(Duration.ofSeconds(20)).build();
                CompletableFuture<Decision> asked = limiter.decideAsync("second-" + UUID.randomUUID())
                        .toCompletableFuture();
                // the first attempt fails on a dropped connection (the next comes 500 ms later); the
                // decision is still waiting for the store when they stop being dropped
                for (int polls = 0; polls < 2_000 && proxy.dropped() == 0; polls++) {
                    Thread.sleep(5);
                }
                assertThat(proxy.dropped()).as("connections of the first attempt dropped").isPositive();
                Thread.sleep(200);
                proxy.dropConnections(0);
                assertThat(asked.get(30, TimeUnit.SECONDS).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
                assertThat(limiter.decide("second-" + UUID.randomUUID()).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            } finally {
                store.close();
            }
        }
    }

    /** A negative start-up wait is bad configuration, refused naming the setting and the value. */
    @Test
    void aNegativeStartupWaitIsRefused() {
        assertThatThrownBy(() -> RedisStore.builder().startupWait(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'startupWait' must not be negative, got 'PT-0.001S'");
    }

    /**
     * A Redis that accepts connections and never answers cannot be told from a slow one at first:
     * decisions wait for it, at most the bound (the larger of the limiter's timeout and the store's
     * start-up wait, here 1 s, and the client's 1 s command timeout ends the store's attempt as
     * soon), then follow the failure mode, blocking and asynchronous alike.
     */
    @Test
    void aRedisThatNeverAnswersGetsTheFailureModeWithinTheBound() throws Exception {
        try (StallingProxy proxy = new StallingProxy(redis.port())) {
            proxy.stall();
            RedisStore store = RedisStore.builder().connect(proxy.url()).startupWait(Duration.ofSeconds(1)).build();
            try {
                for (FailureMode mode : List.of(FailureMode.OPEN, FailureMode.CLOSED)) {
                    RateLimiter limiter = RateLimiter.builder().limit(Limit.of("never", "5/1m")).store(store)
                            .failureMode(mode).timeout(Duration.ofMillis(200)).build();
                    Decision.Outcome expected = mode == FailureMode.OPEN ? Decision.Outcome.FAILED_OPEN
                            : Decision.Outcome.FAILED_CLOSED;
                    CompletableFuture<Decision> later = limiter.decideAsync("never-" + UUID.randomUUID())
                            .toCompletableFuture();
                    assertThat(limiter.decide("never-" + UUID.randomUUID()).outcome()).isEqualTo(expected);
                    // the bound is 1 s (and 200 ms once the store has found Redis unreachable); 10 s is
                    // slack for a busy machine, far below the 30 s a hung decision would take
                    assertThat(later.get(10, TimeUnit.SECONDS).outcome()).isEqualTo(expected);
                }
                assertThat(store.ready()).isFalse();
            } finally {
                store.close();
            }
        }
    }
}
