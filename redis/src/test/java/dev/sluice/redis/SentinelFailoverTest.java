package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.Resp;
import dev.sluice.testing.TestSentinel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis Sentinel failover under load, through {@code store=redisson:<yaml>} naming three real
 * sentinels on loopback: while the replica is promoted every decision follows its limiter's
 * failure mode within the timeout, decisions resume on the new master through the same store and
 * limiters, and with the replica in sync before the master dies the count carries over exactly
 * (docs/configuration.md, "What a Redis failover can lose").
 */
class SentinelFailoverTest {

    private static final Duration TIMEOUT = Duration.ofMillis(200);
    /** Scheduling slack on a loaded machine; a hang would be many seconds. */
    private static final long SLACK_MILLIS = 1_000;
    private static final int LOAD_THREADS = 4;

    /** One decision of a load thread. */
    private record Sample(FailureMode mode, long startedNanos, long tookNanos, Decision.Outcome outcome,
            Throwable error) {
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aFailoverUnderLoadFollowsTheFailureModeThenResumesOnTheNewMasterWithTheCountExact() throws Exception {
        try (TestSentinel sentinel = new TestSentinel();
             RedisStore store = RedisStore.connect("redisson:" + sentinel.redissonYaml(
                     "readMode: \"MASTER\"", "subscriptionMode: \"MASTER\"", "scanInterval: 250",
                     "timeout: 1000", "connectTimeout: 1000", "retryAttempts: 0"))) {
            Limit generous = Limit.of("sentinel-load", 1_000_000, Duration.ofSeconds(1));
            Map<FailureMode, RateLimiter> load = new EnumMap<>(FailureMode.class);
            for (FailureMode mode : FailureMode.values()) {
                load.put(mode,
                        RateLimiter.builder().limit(generous).store(store).failureMode(mode).timeout(TIMEOUT).build());
            }
            // Exact counting needs answers, not timeouts: this limiter waits long enough on a loaded machine.
            RateLimiter counted = RateLimiter.builder()
                    .limit(Limit.of("sentinel-count", 50, Duration.ofDays(366)).withAlgorithm(Algorithm.FIXED_WINDOW))
                    .store(store).failureMode(FailureMode.CLOSED).timeout(Duration.ofSeconds(5)).build();
            String caller = "failover-" + UUID.randomUUID();
            TestSentinel.await(Duration.ofSeconds(15), "the store to answer through the sentinels",
                    () -> load.get(FailureMode.CLOSED).decide("warm-up").outcome() == Decision.Outcome.ALLOWED);

            ConcurrentLinkedQueue<Sample> samples = new ConcurrentLinkedQueue<>();
            AtomicBoolean running = new AtomicBoolean(true);
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < LOAD_THREADS; t++) {
                FailureMode mode = FailureMode.values()[t % FailureMode.values().length];
                RateLimiter limiter = load.get(mode);
                int thread = t;
                Thread worker = new Thread(() -> {
                    for (int i = 0; running.get(); i++) {
                        long started = System.nanoTime();
                        try {
                            Decision decision = limiter.decide("load-" + thread + "-" + (i % 20));
                            samples.add(new Sample(mode, started, System.nanoTime() - started, decision.outcome(),
                                    null));
                        } catch (Throwable e) {
                            samples.add(new Sample(mode, started, System.nanoTime() - started, null, e));
                        }
                        try {
                            Thread.sleep(5); // steady traffic that leaves the two cores to Redis and the sentinels
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }, "sentinel-load-" + t);
                worker.setDaemon(true);
                threads.add(worker);
                worker.start();
            }
            try {
                for (int i = 0; i < 30; i++) {
                    Decision decision = counted.decide(caller);
                    assertThat(decision.outcome()).as("counted request %d before the failover", i + 1)
                            .isEqualTo(Decision.Outcome.ALLOWED);
                    assertThat(decision.remaining()).isEqualTo(49 - i);
                }
                sentinel.awaitReplicaInSync(Duration.ofSeconds(10));

                int oldMaster = sentinel.masterPort();
                int newMaster = sentinel.otherServer(oldMaster);
                long killed = System.nanoTime();
                sentinel.kill(oldMaster);
                sentinel.awaitMaster(newMaster, Duration.ofSeconds(30));
                long promoted = System.nanoTime();
                // The breaker's probe backs off to at most 8 s while the master is gone.
                for (FailureMode mode : FailureMode.values()) {
                    TestSentinel.await(Duration.ofSeconds(15),
                            "the " + mode + " limiter's load to be allowed on the new master",
                            () -> samples.stream().anyMatch(s -> s.mode() == mode && s.startedNanos() > promoted
                                    && s.outcome() == Decision.Outcome.ALLOWED));
                }
                long resumed = samples.stream()
                        .filter(s -> s.startedNanos() > promoted && s.outcome() == Decision.Outcome.ALLOWED)
                        .mapToLong(Sample::startedNanos).min().orElseThrow();
                System.out.printf("sentinel failover: %d failures before the kill, promoted %d ms after the kill, "
                                + "load allowed again %d ms after the promotion%n",
                        samples.stream()
                        .filter(s -> s.startedNanos() < killed && s.outcome() != Decision.Outcome.ALLOWED).count(),
                        TimeUnit.NANOSECONDS.toMillis(promoted - killed),
                        TimeUnit.NANOSECONDS.toMillis(resumed - promoted));
            } finally {
                running.set(false);
                for (Thread worker : threads) {
                    worker.join(5_000);
                }
            }
            for (Thread worker : threads) {
                assertThat(worker.isAlive()).as("load thread " + worker.getName() + " ended").isFalse();
            }

            List<Sample> all = new ArrayList<>(samples);
            assertThat(all).as("decisions that threw").filteredOn(s -> s.error() != null).isEmpty();
            assertThat(all)
                    .as("decisions slower than the timeout of %d ms plus %d ms", TIMEOUT.toMillis(), SLACK_MILLIS)
                    .filteredOn(s -> s.tookNanos() > TimeUnit.MILLISECONDS.toNanos(TIMEOUT.toMillis() + SLACK_MILLIS))
                    .isEmpty();
            assertThat(all).filteredOn(s -> s.mode() == FailureMode.OPEN).extracting(Sample::outcome)
                    .as("a fail-open limiter's outcomes")
                    .containsOnly(Decision.Outcome.ALLOWED, Decision.Outcome.FAILED_OPEN);
            assertThat(all).filteredOn(s -> s.mode() == FailureMode.CLOSED).extracting(Sample::outcome)
                    .as("a fail-closed limiter's outcomes")
                    .containsOnly(Decision.Outcome.ALLOWED, Decision.Outcome.FAILED_CLOSED);
            assertThat(all).filteredOn(s -> s.mode() == FailureMode.LOCAL).extracting(Sample::outcome)
                    .as("a local limiter's outcomes (its generous limit is never reached locally)")
                    .containsOnly(Decision.Outcome.ALLOWED, Decision.Outcome.LOCAL_ALLOWED);
            System.out.printf("sentinel failover: %d load decisions, %d failed open, %d failed closed%n", all.size(),
                    all.stream().filter(s -> s.outcome() == Decision.Outcome.FAILED_OPEN).count(),
                    all.stream().filter(s -> s.outcome() == Decision.Outcome.FAILED_CLOSED).count());

            int master = sentinel.masterPort();
            for (int i = 0; i < 20; i++) {
                Decision decision = counted.decide(caller);
                assertThat(decision.outcome()).as("counted request %d, after the failover", 31 + i)
                        .isEqualTo(Decision.Outcome.ALLOWED);
                assertThat(decision.remaining()).isEqualTo(19 - i);
            }
            Decision refused = counted.decide(caller);
            assertThat(refused.outcome()).as("the 51st counted request").isEqualTo(Decision.Outcome.REJECTED);
            assertThat((List<?>) Resp.call(master, "KEYS", "sluice:{" + caller + "}:*"))
                    .as("the caller's state on the promoted master").isNotEmpty();
        }
    }
}
