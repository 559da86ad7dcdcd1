package dev.sluice.benchmarks;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisStore;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Redis CPU per decision, counted rather than timed by the client: the {@code usec} Redis itself
 * reports for {@code EVALSHA}/{@code EVAL} in {@code INFO commandstats}, divided by the decisions
 * made. This is the script's time on Redis's one command thread, without network I/O (which
 * Redis spends on top, per command rather than per decision). Three shapes per algorithm: one
 * decision per call on distinct keys; distinct keys from 16 threads, where the decisions of
 * callers waiting at the same moment share a call; and one hot key with 256 decisions in flight,
 * where the coalescer sends them in batches that decide.lua decides arithmetically.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.ScriptCost
 * </pre>
 */
public final class ScriptCost {

    private static final int DISTINCT = 20_000;
    private static final int ROUNDS = 400;
    private static final int IN_FLIGHT = 256;
    private static final int THREADS = 16;

    private ScriptCost() {
    }

    public static void main(String[] args) {
        BenchRedis redis = BenchRedis.get();
        RedissonClient client = redis.newClient();
        System.out.println("Redis " + Footprint.info(redis, "server").get("redis_version") + " at " + redis.url());
        System.out.println("| algorithm | shape | decisions | script calls | decisions per call | Redis µs per call | Redis µs per decision | decisions/s per Redis core (script only) |");
        System.out.println("|---|---|---:|---:|---:|---:|---:|---:|");
        try {
            for (Algorithm algorithm : List.of(Algorithm.TOKEN_BUCKET, Algorithm.GCRA)) {
                RateLimiter limiter = RateLimiter.builder()
                        .limit(Limit.of("cost", RedisContender.RATE, Duration.ofSeconds(1)).withAlgorithm(algorithm))
                        .store(RedisStore.of(client)).timeout(Duration.ofSeconds(5)).build();
                limiter.decide("warm-up");
                long[] before = scriptStats(redis);
                for (int i = 0; i < DISTINCT; i++) {
                    check(limiter.decide("distinct-" + i));
                }
                row(algorithm, "distinct keys, one at a time", DISTINCT, before, scriptStats(redis));

                before = scriptStats(redis);
                manyCallersAtOnce(limiter);
                row(algorithm, "distinct keys, " + THREADS + " threads", DISTINCT, before, scriptStats(redis));

                before = scriptStats(redis);
                for (int round = 0; round < ROUNDS; round++) {
                    List<CompletableFuture<Decision>> flight = new ArrayList<>(IN_FLIGHT);
                    for (int i = 0; i < IN_FLIGHT; i++) {
                        flight.add(limiter.decideAsync("hot").toCompletableFuture());
                    }
                    flight.forEach(f -> check(f.join()));
                }
                row(algorithm, "one hot key, " + IN_FLIGHT + " in flight", ROUNDS * IN_FLIGHT, before, scriptStats(redis));
            }
        } finally {
            client.shutdown();
            redis.stop();
        }
    }

    /** {@link #DISTINCT} decisions of distinct callers from {@link #THREADS} threads: the callers' batches share calls. */
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

    private static void check(Decision decision) {
        if (!decision.allowed() || decision.storeFailed()) {
            throw new IllegalStateException("expected an allowed decision from Redis, got " + decision);
        }
    }

    private static void row(Algorithm algorithm, String shape, long decisions, long[] before, long[] after) {
        long calls = after[0] - before[0];
        long usec = after[1] - before[1];
        double perDecision = usec / (double) decisions;
        System.out.printf("| %s | %s | %,d | %,d | %.1f | %.1f | %.2f | %,.0f |%n", algorithm.configName(), shape, decisions,
                calls, decisions / (double) calls, usec / (double) calls, perDecision, 1e6 / perDecision);
    }

    /** Calls and microseconds of EVALSHA and EVAL so far. */
    private static long[] scriptStats(BenchRedis redis) {
        long calls = 0;
        long usec = 0;
        for (Map.Entry<String, String> stat : Footprint.info(redis, "commandstats").entrySet()) {
            if (stat.getKey().equals("cmdstat_evalsha") || stat.getKey().equals("cmdstat_eval")) {
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
