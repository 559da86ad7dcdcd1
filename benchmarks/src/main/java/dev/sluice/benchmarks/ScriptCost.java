package dev.sluice.benchmarks;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisStore;
import org.redisson.api.RedissonClient;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * Redis CPU per decision, counted rather than timed by the client: the {@code usec} Redis itself
 * reports for {@code EVALSHA}/{@code EVAL}/{@code FCALL} in {@code INFO commandstats}, divided by the decisions
 * made. This is the script's time on Redis's one command thread, without network I/O (which
 * Redis spends on top, per command rather than per decision). Four shapes per algorithm: one
 * decision per call on distinct keys; distinct keys from 16 threads deciding synchronously, as a
 * servlet container does, where callers waiting at the same moment share a call; one hot key
 * with 256 decisions in flight, which the store sends in batches that decide.lua decides
 * arithmetically; and 256 distinct callers in flight. Last, the floor ({@link FloorTokenBucket})
 * one call at a time on distinct keys: the Redis time a lone decision is measured against.
 *
 * <p>On a Redis that has functions (7 and later, found by asking it {@code FUNCTION STATS}), the
 * store sends decide.lua as a function ({@code FCALL}) and the rows above count those calls. Then
 * {@value #ROUNDS_APART} more rounds follow, each a lone decision per algorithm from a store told
 * to send scripts ({@code EVALSHA}), then from one sending functions, then the floor's, one after
 * another so that a machine's load weighs on all three alike: rows "distinct keys, one at a time,
 * EVALSHA, round r", the same with FCALL, and the floor's "distinct keys, one at a time, round r".
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.ScriptCost
 * </pre>
 * (also part of the one command, {@link Main}, as {@code --only=script}).
 */
public final class ScriptCost {

    private static final int DISTINCT = 20_000;
    private static final int ROUNDS = 400;
    private static final int IN_FLIGHT = 256;
    private static final int THREADS = 16;
    /** Rounds of EVALSHA, FCALL and the floor side by side, on a Redis that has functions. */
    static final int ROUNDS_APART = 3;

    /** Shape of a row: one decision per call, on distinct keys (issue 26 item 3: a lone decision). */
    static final String LONE = "distinct keys, one at a time";
    /** The algorithm column of the floor's row ({@link FloorTokenBucket}, lone calls only). */
    static final String FLOOR = "floor";

    /** Shape of a row: the hot key in flight, whose Redis time per decision the target names. */
    static final String HOT = "one hot key, " + IN_FLIGHT + " in flight";

    /** One algorithm and shape: decisions made, script calls Redis ran, and the microseconds Redis spent in them. */
    record Row(String algorithm, String shape, long decisions, long calls, long usec) {

        double microsPerDecision() {
            return usec / (double) decisions;
        }
    }

    private ScriptCost() {
    }

    public static void main(String[] args) {
        BenchRedis redis = BenchRedis.get();
        try {
            System.out.println("Redis " + Footprint.info(redis, "server").get("redis_version") + " at " + redis.url());
            System.out.print(table(measure(redis)));
        } finally {
            redis.stop();
        }
    }

    /** Measures every shape for the token bucket and GCRA on {@code redis}. */
    static List<Row> measure(BenchRedis redis) {
        RedissonClient client = redis.newClient();
        List<Row> rows = new ArrayList<>();
        try {
            for (Algorithm algorithm : List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA)) {
                RateLimiter limiter = RateLimiter.builder()
                        .limit(Limit.of("cost", RedisContender.RATE, Duration.ofSeconds(1)).withAlgorithm(algorithm))
                        .store(RedisStore.of(client)).timeout(Duration.ofSeconds(5)).build();
                limiter.decide("warm-up");
                String name = algorithm.configName();

                long[] before = scriptStats(redis);
                for (int i = 0; i < DISTINCT; i++) {
                    check(limiter.decide("distinct-" + i));
                }
                rows.add(row(name, LONE, DISTINCT, before, scriptStats(redis)));

                before = scriptStats(redis);
                manyCallersAtOnce(limiter);
                rows.add(row(name, "distinct keys, " + THREADS + " threads", DISTINCT, before, scriptStats(redis)));

                before = scriptStats(redis);
                inFlight(limiter, i -> "hot");
                rows.add(row(name, HOT, (long) ROUNDS * IN_FLIGHT, before, scriptStats(redis)));

                before = scriptStats(redis);
                inFlight(limiter, i -> "caller-" + i);
                rows.add(row(name, IN_FLIGHT + " distinct callers in flight", (long) ROUNDS * IN_FLIGHT, before,
                        scriptStats(redis)));
            }
            // The floor's lone call beside Sluice's: what a minimal script costs Redis on the same keys.
            FloorTokenBucket floor = new FloorTokenBucket(client, RedisContender.RATE, Duration.ofSeconds(1));
            floor.tryAcquire("floor-warm-up");
            long[] before = scriptStats(redis);
            for (int i = 0; i < DISTINCT; i++) {
                if (!floor.tryAcquire("floor-" + i)) {
                    throw new IllegalStateException("expected the floor to admit");
                }
            }
            rows.add(row(FLOOR, LONE, DISTINCT, before, scriptStats(redis)));
            if (hasFunctions(redis)) {
                for (int round = 1; round <= ROUNDS_APART; round++) {
                    rows.addAll(scriptsAndFunctions(redis, client, floor, round));
                }
            }
        } finally {
            client.shutdown();
        }
        return rows;
    }

    /**
     * One round of lone decisions on distinct keys: each algorithm's by EVALSHA, then by FCALL,
     * then the floor's. Throws if a store did not send what its row is named after.
     */
    private static List<Row> scriptsAndFunctions(BenchRedis redis, RedissonClient client, FloorTokenBucket floor,
                                                 int round) {
        List<Row> rows = new ArrayList<>();
        for (Algorithm algorithm : List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA)) {
            for (boolean functions : List.of(false, true)) {
                String sent = functions ? "FCALL" : "EVALSHA";
                RedisStore store = RedisStore.builder().client(client).functions(functions).build();
                RateLimiter limiter = RateLimiter.builder()
                        .limit(Limit.of("cost", RedisContender.RATE, Duration.ofSeconds(1)).withAlgorithm(algorithm))
                        .store(store).timeout(Duration.ofSeconds(5)).build();
                limiter.decide("warm-up");
                long[] before = scriptStats(redis);
                long functionCalls = calls(redis, "cmdstat_fcall");
                for (int i = 0; i < DISTINCT; i++) {
                    check(limiter.decide("apart-" + round + "-" + sent + "-" + i));
                }
                long[] after = scriptStats(redis);
                if ((calls(redis, "cmdstat_fcall") > functionCalls) != functions) {
                    throw new IllegalStateException("the store told functions=" + functions + " sent "
                            + (functions ? "no" : "an") + " FCALL");
                }
                store.close(); // the client is this run's: the store leaves it open
                rows.add(row(algorithm.configName(), LONE + ", " + sent + ", round " + round, DISTINCT, before,
                        after));
            }
        }
        long[] before = scriptStats(redis);
        for (int i = 0; i < DISTINCT; i++) {
            if (!floor.tryAcquire("floor-" + round + "-" + i)) {
                throw new IllegalStateException("expected the floor to admit");
            }
        }
        rows.add(row(FLOOR, LONE + ", round " + round, DISTINCT, before, scriptStats(redis)));
        return rows;
    }

    /** Whether the Redis knows {@code FUNCTION} (Redis 7 and later). */
    private static boolean hasFunctions(BenchRedis redis) {
        try {
            redis.command("FUNCTION", "STATS");
            return true;
        } catch (UncheckedIOException e) {
            return false;
        }
    }

    /** The rows as a Markdown table. */
    static String table(List<Row> rows) {
        StringBuilder md = new StringBuilder();
        md.append("| algorithm | shape | decisions | script calls | decisions per call | Redis µs per call "
                + "| Redis µs per decision | decisions/s per Redis core (script only) |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (Row row : rows) {
            md.append(String.format("| %s | %s | %,d | %,d | %.1f | %.1f | %.2f | %,.0f |%n",
                    row.algorithm(), row.shape(), row.decisions(), row.calls(),
                    row.decisions() / (double) row.calls(), row.usec() / (double) row.calls(),
                    row.microsPerDecision(), 1e6 / row.microsPerDecision()));
        }
        return md.toString();
    }

    /**
     * {@link #DISTINCT} decisions of distinct callers from {@link #THREADS} threads: the callers' batches share
     * calls.
     */
    private static void manyCallersAtOnce(RateLimiter limiter) {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            List<Future<?>> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                threads.add(pool.submit(() -> {
                    for (int i = 0; i < DISTINCT / THREADS; i++) {
                        check(limiter.decide("many-" + thread + "-" + i));
                    }
                }));
            }
            for (Future<?> thread : threads) {
                thread.get();
            }
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException(e);
        } finally {
            pool.shutdownNow();
        }
    }

    /** {@link #ROUNDS} rounds of {@link #IN_FLIGHT} asynchronous decisions, the caller of each named by its index. */
    private static void inFlight(RateLimiter limiter, IntFunction<String> caller) {
        for (int round = 0; round < ROUNDS; round++) {
            List<CompletableFuture<Decision>> flight = new ArrayList<>(IN_FLIGHT);
            for (int i = 0; i < IN_FLIGHT; i++) {
                flight.add(limiter.decideAsync(caller.apply(i)).toCompletableFuture());
            }
            flight.forEach(f -> check(f.join()));
        }
    }

    private static void check(Decision decision) {
        if (!decision.allowed() || decision.storeFailed()) {
            throw new IllegalStateException("expected an allowed decision from Redis, got " + decision);
        }
    }

    private static Row row(String algorithm, String shape, long decisions, long[] before, long[] after) {
        return new Row(algorithm, shape, decisions, after[0] - before[0], after[1] - before[1]);
    }

    /** Calls of one command so far ({@code cmdstat_fcall}), from INFO commandstats. */
    private static long calls(BenchRedis redis, String stat) {
        String value = Footprint.info(redis, "commandstats").get(stat);
        return value == null ? 0 : Long.parseLong(value.substring("calls=".length(), value.indexOf(',')));
    }

    /** Calls and microseconds of EVALSHA, EVAL and FCALL so far. */
    private static long[] scriptStats(BenchRedis redis) {
        long calls = 0;
        long usec = 0;
        for (Map.Entry<String, String> stat : Footprint.info(redis, "commandstats").entrySet()) {
            if (stat.getKey().equals("cmdstat_evalsha") || stat.getKey().equals("cmdstat_eval")
                    || stat.getKey().equals("cmdstat_fcall")) {
                for (String part : stat.getValue().split(",")) {
                    if (part.startsWith("calls=")) {
                        calls += Long.parseLong(part.substring(6));
                    } else if (part.startsWith("usec=")) {
                        usec += Long.parseLong(part.substring(5));
                    }
                }
            }
        }
        return new long[] {calls, usec};
    }
}
