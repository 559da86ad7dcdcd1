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
    void everyOutboundContenderGrantsItsBurstThenWaitsForTheRate() throws Exception {
        for (String name : OutboundContender.NAMES) {
            String[] keys = {"smoke-out-" + name + "-" + System.nanoTime()};
            // 10 per second, burst 2: six permits take at least 4 x 100 ms, whoever grants them;
            // Redisson's whole-second window grants 10 at once, and the 11th a second later
            boolean perSecond = name.equals("redisson-per-second");
            long atLeastMillis = perSecond ? 990 : 390;
            try (OutboundContender contender = OutboundContender.create(name, client, keys, 10)) {
                long started = System.nanoTime();
                long longestPromise = OutboundContender.NO_PROMISE;
                for (int i = 0; i < (perSecond ? 11 : 6); i++) {
                    long promised = contender.async() ? contender.acquireAsync(0).get(10, TimeUnit.SECONDS)
                            : contender.acquire(0);
                    longestPromise = Math.max(longestPromise, promised);
                }
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                assertThat(tookMillis).as(name + " waited for the rate (ms)").isBetween(atLeastMillis, 10_000L);
                assertThat(contender.failures()).as(name).isZero();
                if (name.startsWith("sluice")) {
                    assertThat(longestPromise).as(name + " promised a wait").isPositive();
                } else {
                    assertThat(longestPromise).as(name).isEqualTo(OutboundContender.NO_PROMISE);
                }
            }
        }
    }

    @Test
    void theOutboundDriverStampsGrantsAndCountsTheirCommands() {
        // one sync peer (threads) and Sluice's async form (chains), on the real driver
        for (String name : new String[] {"bucket4j", "sluice-token-bucket-async"}) {
            OutboundBenchmark.Row row = OutboundBenchmark.trial(BenchRedis.get(), name, 1, 2,
                    Duration.ofMillis(200), Duration.ofMillis(600));
            assertThat(row.grants()).as(name).isPositive();
            assertThat(row.acquires()).as(name).isGreaterThanOrEqualTo(row.grants() / 2);
            assertThat(row.commands()).as(name + ": every acquire costs Redis a command")
                    .isGreaterThanOrEqualTo(row.acquires());
            assertThat(row.scripts()).as(name).isPositive();
            assertThat(row.failures()).as(name).isZero();
            assertThat(row.schedule()).as(name).isNotNull();
            assertThat(row.promise() != null).as(name + " promises").isEqualTo(name.startsWith("sluice"));
        }
    }

    @Test
    void theOutboundFiguresComeFromTheStarts() {
        long t0 = 1_000_000_000L;
        long t1 = t0 + 2_000_000_000L;
        OutboundBenchmark.Stamps onTime = new OutboundBenchmark.Stamps(0);
        onTime.add(t0 - 5_000_000, t0 - 1_000_000, 0); // before the measured time: not counted
        for (int k = 0; k < 2_000; k++) {
            // 1,000 per second, every one on its slot, each asked 10 ms before and promised 7 ms: 3 ms late
            long start = t0 + k * 1_000_000L;
            onTime.add(start - 10_000_000, start, 7_000_000);
        }
        OutboundBenchmark.Row row = OutboundBenchmark.row("x", 1, 1, 1_000, t0, t1,
                new OutboundBenchmark.Stamps[] {onTime},
                0, 0, 2_000, java.util.Map.of(), java.util.Map.of("evalsha", new long[] {2_000, 4_000}));
        assertThat(row.grants()).isEqualTo(2_000);
        assertThat(row.achieved()).isEqualTo(1.0);
        assertThat(row.schedule().max()).isEqualTo(0.0);
        assertThat(row.promise().p50()).isEqualTo(3.0);
        assertThat(row.maxInSecond()).isEqualTo(1_000);
        assertThat(row.overAdmitted()).isZero();
        assertThat(row.commandsPerAcquire()).isEqualTo(1.0);
        assertThat(row.scriptsPerAcquire()).isEqualTo(1.0);
        assertThat(row.redisMicrosPerAcquire()).isEqualTo(2.0);

        // five more in the first half second: a 1 s holding 1,005, above rate + burst (1,002)
        OutboundBenchmark.Stamps extra = new OutboundBenchmark.Stamps(0);
        for (int i = 0; i < 5; i++) {
            extra.add(t0, t0 + i * 100_000_000L + 500_000, OutboundContender.NO_PROMISE);
        }
        row = OutboundBenchmark.row("x", 1, 2, 1_000, t0, t1, new OutboundBenchmark.Stamps[] {onTime, extra},
                0, 0, 2_005, java.util.Map.of(), java.util.Map.of());
        assertThat(row.maxInSecond()).isEqualTo(1_005);
        assertThat(row.overAdmitted()).isPositive();
        assertThat(row.schedule().p50()).as("more grants than the rate: the later ones ahead of their slots")
                .isNegative();
    }

    @Test
    void everyPostgresPartContenderAdmitsUpToItsLimitThenRefuses() {
        // The Postgres the postgres module's tests start; each contender on a key of its own.
        try (PostgresBenchmark.Database db = new PostgresBenchmark.Database(6)) {
            for (String name : PostgresBenchmark.NAMES) {
                String[] keys = {"smoke-pg-" + name + "-" + System.nanoTime()};
                long tripsBefore = db.roundTrips.sum();
                try (PostgresBenchmark.Contender contender =
                             PostgresBenchmark.create(name, db, client, keys, 3, Duration.ofHours(1), 2)) {
                    for (int i = 0; i < 3; i++) {
                        assertThat(contender.decide(0)).as(name + " decision " + i).isTrue();
                    }
                    assertThat(contender.decide(0)).as(name + " after its limit").isFalse();
                    assertThat(contender.failures()).as(name).isZero();
                }
                long trips = db.roundTrips.sum() - tripsBefore;
                if (name.equals("sluice-redis")) {
                    assertThat(trips).as(name + " never asks Postgres").isZero();
                } else {
                    // three admissions (a read and a write each) and a refusal (a read)
                    assertThat(trips).as(name + " round trips to Postgres").isGreaterThanOrEqualTo(7);
                }
            }
        }
    }

    @Test
    void thePostgresDriverCountsAllowedDecisionsAndRoundTrips() {
        try (PostgresBenchmark.Database db = new PostgresBenchmark.Database(6);
             PostgresBenchmark.Contender contender = PostgresBenchmark.create("sluice-postgres", db, client,
                     new String[] {"smoke-pg-a-" + System.nanoTime(), "smoke-pg-b-" + System.nanoTime()},
                     PostgresBenchmark.COUNT, PostgresBenchmark.PERIOD, 2)) {
            PostgresBenchmark.Row row = PostgresBenchmark.trial(contender, "sluice-postgres", 2, 1,
                    Duration.ofMillis(200), Duration.ofMillis(500), db.roundTrips::sum, db.statementNanos::sum);
            assertThat(row.decisions()).isPositive();
            assertThat(row.allowed()).isEqualTo(row.decisions());
            assertThat(row.failures()).isZero();
            assertThat(row.p50Micros()).isPositive().isLessThanOrEqualTo(row.p99Micros());
            assertThat(row.roundTripsPerDecision()).as("a read and a write per admission").isGreaterThanOrEqualTo(1.9);
            assertThat(row.statementMicrosPerDecision()).as("time in SQL per decision")
                    .isPositive().isLessThan(1_000_000.0 * row.seconds());
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
