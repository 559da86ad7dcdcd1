package dev.sluice.benchmarks;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The one entry point: starts (or finds) the Redis, counts bytes and round trips
 * ({@link Footprint}) and Redis's time per decision ({@link ScriptCost}), runs the JMH benchmarks
 * ({@link RedisBenchmark} at each Redis thread count, each trial first warmed until its throughput
 * stops climbing, {@link MemoryBenchmark} at each in-memory thread count) with every forked JVM
 * pointed at that same Redis, loads a servlet with and without the filter over HTTP
 * ({@link HttpBenchmark}, with {@code wrk} when it is installed), checks that the floor is a floor
 * ({@link SanityCheck}: a plain {@code evalSha} loop and {@code redis-benchmark} at the same
 * concurrency), and writes the tables of raw results, Sluice/peer ratios, per-iteration steadiness
 * and the targets to a Markdown file.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar [--quick]
 *      [--only=footprint,script,redis,sanity,memory,outbound,postgres,http]
 *      [--redis-threads=1,16,64] [--redis-contenders=floor,sluice-gcra,...] [--memory-threads=1,2]
 *      [--steady-max=SECONDS] [--sanity-rounds=N] [--out=FILE] [JMH options...]
 * </pre>
 *
 * JMH options after ours (for example {@code -wi 1 -w 1s -i 2 -r 1s} or {@code -p keys=1}) refine
 * the run ({@code -p contender=...} picks in-memory contenders with {@code --only=memory}; Redis
 * contenders are picked by {@code --redis-contenders}); {@code --quick} is a smoke run of a few
 * minutes: a subset of contenders, threads 1 and 16, two 1-second iterations. {@code --steady-max}
 * bounds the warm-up to a steady state of each Redis trial and of the sanity check's plain loop
 * (30 s by default, 5 with {@code --quick}; 0 turns it off); {@code --sanity-rounds} is how many new
 * JVMs of the floor and of the plain loop the sanity check runs at each thread count (3 by default,
 * 1 with {@code --quick}).
 *
 * <p>The {@code outbound} part ({@link OutboundBenchmark}, in the default set) waits for permits
 * under contention, Sluice beside Bucket4j's blocking API and Redisson's {@code RRateLimiter};
 * {@code --outbound-contenders=sluice-gcra,bucket4j,...} picks its contenders. It ends with the
 * share of a strict provider's quota three instances get accepted ({@link ProviderQuota}), and
 * the same with three JVMs of eight threads each, beside Bucket4j ({@link ProviderQuotaJvms}).
 *
 * <p>The {@code postgres} part ({@link PostgresBenchmark}, in the default set, about two minutes)
 * starts a Postgres on loopback and measures Sluice's Postgres store beside a plain JDBC baseline
 * and Sluice's Redisson store, at 1 and 16 threads.
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) throws Exception {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            // Redisson's connection chatter would bury JMH's progress lines.
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        boolean quick = false;
        List<String> only = List.of("footprint", "script", "redis", "sanity", "memory", "outbound", "postgres",
                "http");
        Integer steadyMax = null;
        Integer sanityRounds = null;
        int[] redisThreads = {1, 16, 64};
        int[] memoryThreads = {1, 2};
        List<String> redisContenders = List.of();
        List<String> outboundContenders = Arrays.asList(OutboundContender.NAMES);
        Path out = Files.isDirectory(Path.of("benchmarks")) ? Path.of("benchmarks/target/results.md")
                : Path.of("results.md");
        List<String> jmhArgs = new ArrayList<>();
        for (String arg : args) {
            if (arg.equals("--quick")) {
                quick = true;
            } else if (arg.startsWith("--only=")) {
                only = Arrays.asList(value(arg).split(","));
            } else if (arg.startsWith("--redis-threads=")) {
                redisThreads = ints(value(arg));
            } else if (arg.startsWith("--redis-contenders=")) {
                redisContenders = Arrays.asList(value(arg).split(","));
            } else if (arg.startsWith("--outbound-contenders=")) {
                outboundContenders = Arrays.asList(value(arg).split(","));
            } else if (arg.startsWith("--memory-threads=")) {
                memoryThreads = ints(value(arg));
            } else if (arg.startsWith("--steady-max=")) {
                steadyMax = Integer.parseInt(value(arg));
                if (steadyMax < 0) {
                    throw new IllegalArgumentException("--steady-max must be 0 or more seconds, got '" + arg + "'");
                }
            } else if (arg.startsWith("--sanity-rounds=")) {
                sanityRounds = Integer.parseInt(value(arg));
                if (sanityRounds < 1) {
                    throw new IllegalArgumentException("--sanity-rounds must be 1 or more, got '" + arg + "'");
                }
            } else if (arg.startsWith("--out=")) {
                out = Path.of(value(arg));
            } else if (arg.equals("--help") || arg.equals("-h")) {
                System.out.println("usage: java -jar benchmarks.jar [--quick] "
                        + "[--only=footprint,script,redis,sanity,memory,outbound,postgres,http] "
                        + "[--redis-threads=1,16,64] [--redis-contenders=floor,sluice-gcra,...] [--memory-threads=1,2] "
                        + "[--steady-max=SECONDS] [--sanity-rounds=N] [--out=FILE] [JMH options]");
                System.out.println("       --only=outbound [--outbound-contenders="
                        + String.join(",", OutboundContender.NAMES) + "]");
                return;
            } else {
                jmhArgs.add(arg);
            }
        }
        if (quick && Arrays.equals(redisThreads, new int[] {1, 16, 64})) {
            redisThreads = new int[] {1, 16};
        }
        int steadySeconds = steadyMax != null ? steadyMax : quick ? 5 : 30;
        CommandLineOptions jmh;
        try {
            jmh = new CommandLineOptions(jmhArgs.toArray(String[]::new));
        } catch (CommandLineOptionException e) {
            throw new IllegalArgumentException("bad JMH option: " + e.getMessage(), e);
        }

        BenchRedis redis = BenchRedis.get();
        String started = ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        Report report = new Report(started, redis, Footprint.info(redis, "server").getOrDefault("redis_version", "?"),
                quick, String.join(" ", args));
        System.out.println("Redis " + report.redisVersion() + " at " + redis.url()
                + (redis.owned() ? " (started by this run)" : ""));

        if (only.contains("footprint")) {
            List<String> names = quick ? List.of("sluice-token-bucket", "sluice-gcra", "floor", "bucket4j")
                    : Arrays.asList(RedisContender.NAMES);
            report.footprint(Footprint.measure(redis, names));
            System.out.println(report.footprintTable());
        }
        if (only.contains("script")) {
            report.scriptCost(ScriptCost.measure(redis));
            System.out.println(ScriptCost.table(report.scriptCost()));
        }
        Path json = out.toAbsolutePath().getParent().resolve("jmh");
        Files.createDirectories(json);
        Path warmupLog = json.resolve("warmup.tsv");
        Files.deleteIfExists(warmupLog);
        List<RunResult> results = new ArrayList<>();
        if (only.contains("redis")) {
            List<String> contenders = new ArrayList<>(redisContenders);
            if (contenders.isEmpty()) {
                contenders = quick ? List.of("sluice-token-bucket", "floor", "bucket4j", "bucket4j-batching")
                        : Arrays.asList(RedisContender.NAMES);
            }
            for (int threads : redisThreads) {
                // One JMH run per contender, so a Redis that dies under one (it once died mid-run
                // on a shared machine, cause not found) is noticed, restarted and named in the report.
                for (String contender : contenders) {
                    if (!redis.ensureAlive()) {
                        report.warn("Redis was down before " + contender + " at " + threads
                                + " threads and was restarted; earlier trials may have failed");
                    }
                    ChainedOptionsBuilder options = options(jmh, quick, redis, steadySeconds, warmupLog)
                            .include(RedisBenchmark.class.getName() + "\\.")
                            .threads(threads)
                            .param("contender", contender)
                            .result(json.resolve("redis-t" + threads + "-" + contender + ".json").toString());
                    results.addAll(run(options, report, contender + " at " + threads + " threads"));
                }
            }
            if (Files.exists(warmupLog)) {
                report.warmups(Files.readAllLines(warmupLog));
            }
        }
        if (only.contains("sanity")) {
            // Right after the Redis trials: the same Redis, the same machine load, the floor's thread counts.
            if (!redis.ensureAlive()) {
                report.warn("Redis was down before the sanity check and was restarted");
            }
            Path sanityLog = json.resolve("sanity-warmup.tsv");
            Files.deleteIfExists(sanityLog);
            boolean quickRun = quick;
            SanityCheck.FloorFork floorFork = threads -> {
                ChainedOptionsBuilder options = options(jmh, quickRun, redis, steadySeconds, sanityLog)
                        .include(Pattern.quote(RedisBenchmark.class.getName() + ".sync") + "$")
                        .mode(Mode.Throughput)
                        .forks(1)
                        .threads(threads)
                        .param("contender", "floor")
                        .param("keys", Integer.toString(SanityCheck.KEYS));
                Collection<RunResult> trial =
                        run(options, report, "the sanity check's floor at " + threads + " threads");
                return trial.isEmpty() ? new SanityCheck.Measured(Double.NaN, "the floor's trial failed")
                        : SanityCheck.floorMeasured(trial.iterator().next(), lastLine(sanityLog));
            };
            report.sanity(SanityCheck.measure(redis, redisThreads, Duration.ofSeconds(Math.max(1, steadySeconds)),
                    sanityRounds != null ? sanityRounds : quick ? 1 : 3, floorFork));
            SanityCheck.Measured pipelined = SanityCheck.pipelined(redis);
            System.out.printf(Locale.ROOT, "redis-benchmark EVALSHA of the floor, %d connections, pipeline %d: %s%n",
                    SanityCheck.PIPELINED_CONNECTIONS, SanityCheck.PIPELINE, pipelined.note());
            report.pipelined(pipelined);
        }
        if (only.contains("memory")) {
            for (int threads : quick ? new int[] {1} : memoryThreads) {
                ChainedOptionsBuilder options = options(jmh, quick, redis, steadySeconds, warmupLog)
                        .include(MemoryBenchmark.class.getName() + "\\.")
                        // bytes allocated per decision (gc.alloc.rate.norm), a target beside the time
                        .addProfiler(GCProfiler.class)
                        .threads(threads)
                        .result(json.resolve("memory-t" + threads + ".json").toString());
                results.addAll(run(options, report, "in memory at " + threads + " threads"));
            }
        }
        if (only.contains("outbound")) {
            // Waiting for a permit under contention (issue 25): a fixed-duration driver, not JMH.
            if (!redis.ensureAlive()) {
                report.warn("Redis was down before the outbound part and was restarted");
            }
            report.outbound(OutboundBenchmark.measure(redis, outboundContenders,
                    quick ? new int[] {1} : new int[] {1, 8}, new int[] {16, 64},
                    Duration.ofSeconds(quick ? 2 : 3), Duration.ofSeconds(quick ? 3 : 5), report::warn));
            // A strict provider's quota, shared by three instances: the throughput the tests leave to this run.
            try {
                ProviderQuota.Row quota =
                        ProviderQuota.measure(redis, Duration.ofSeconds(1), Duration.ofSeconds(quick ? 5 : 20));
                System.out.println(ProviderQuota.line(quota));
                report.providerQuota(quota);
            } catch (RuntimeException e) {
                report.warn("outbound provider quota failed: " + e);
            }
            // The same provider shared by three JVMs, beside Bucket4j: waiters of a paused JVM come back late.
            report.providerQuotaJvms(ProviderQuotaJvms.measure(redis, quick ? 1 : 2, Duration.ofSeconds(quick ? 2 : 5),
                    Duration.ofSeconds(quick ? 10 : 30), report::warn));
        }
        if (only.contains("postgres")) {
            // The Postgres store beside the Redisson one and a plain JDBC baseline: a fixed-duration driver.
            if (!redis.ensureAlive()) {
                report.warn("Redis was down before the Postgres part and was restarted");
            }
            StringBuilder postgres = new StringBuilder();
            try {
                List<PostgresBenchmark.Row> rows = PostgresBenchmark.measure(redis, List.of(PostgresBenchmark.NAMES),
                        new int[] {1, 16}, Duration.ofSeconds(quick ? 1 : 2), Duration.ofSeconds(quick ? 2 : 5),
                        report::warn, postgres);
                postgres.append('\n').append(PostgresBenchmark.table(rows, List.of(PostgresBenchmark.NAMES),
                        new int[] {1, 16}));
                report.postgres(postgres.toString());
            } catch (RuntimeException e) {
                report.warn("the Postgres part failed: " + e);
            }
        }
        report.results(results);
        if (only.contains("http")) {
            // Last: wrk and Jetty share the machine's cores with nothing else of this run.
            boolean wrk = HttpBenchmark.wrkInstalled();
            if (!wrk) {
                report.warn("wrk is not installed (apt-get install wrk): "
                        + "HTTP load came from Java HttpClient threads in this JVM");
            }
            int connections = 16;
            int seconds = quick ? 1 : 3;
            List<HttpBenchmark.Route> routes = HttpBenchmark.measure(wrk, connections, seconds, redis.url());
            report.http(HttpBenchmark.table(wrk, connections, seconds, routes), routes);
        }
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, report.markdown());
        System.out.println();
        System.out.println(report.markdown());
        System.out.println("Written to " + out.toAbsolutePath() + " (JMH JSON in " + json + ")");
        redis.stop();
    }

    /** Runs JMH; a failed trial is left out of the tables and named in the report, not fatal. */
    private static Collection<RunResult> run(ChainedOptionsBuilder options, Report report, String what) {
        try {
            Collection<RunResult> results = new Runner(options.build()).run();
            return results;
        } catch (RunnerException e) {
            report.warn("JMH failed for " + what + ": " + e.getMessage());
            return List.of();
        }
    }

    private static ChainedOptionsBuilder options(CommandLineOptions jmh, boolean quick, BenchRedis redis,
                                                 int steadySeconds, Path warmupLog) {
        ChainedOptionsBuilder options = new OptionsBuilder().parent(jmh)
                .resultFormat(ResultFormatType.JSON)
                .shouldFailOnError(false)
                // Every fork meets the Redis this launcher started or found.
                .jvmArgsAppend("-D" + BenchRedis.URL_PROPERTY + "=" + redis.url(),
                        "-D" + BenchRedis.OWNED_PROPERTY + "=" + redis.owned(),
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                        "-D" + RedisBenchmark.STEADY_MAX_PROPERTY + "=" + steadySeconds,
                        "-D" + RedisBenchmark.WARMUP_LOG_PROPERTY + "=" + warmupLog.toAbsolutePath());
        if (quick) {
            // Two measured iterations, so that the report can show whether they were steady.
            options.forks(1).warmupIterations(1).warmupTime(TimeValue.seconds(1))
                    .measurementIterations(2).measurementTime(TimeValue.seconds(1));
        }
        return options;
    }

    /** The last line of {@code file}, empty if it has none or does not exist. */
    private static String lastLine(Path file) {
        try {
            List<String> lines = Files.exists(file) ? Files.readAllLines(file) : List.of();
            return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read " + file, e);
        }
    }

    private static String value(String arg) {
        return arg.substring(arg.indexOf('=') + 1);
    }

    private static int[] ints(String list) {
        return Arrays.stream(list.split(",")).map(String::trim).mapToInt(Integer::parseInt).toArray();
    }
}
