package dev.sluice.benchmarks;

import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.options.TimeValue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * Turns one run's footprint rows and JMH results into Markdown: the machine, raw tables, and
 * Sluice/peer ratios computed only from results of this same run.
 */
final class Report {

    private static final String TB = "sluice-token-bucket";

    private final String started;
    private final BenchRedis redis;
    private final String redisVersion;
    private final boolean quick;
    private final String args;
    private List<Footprint.Row> footprint = List.of();
    private final Map<String, RunResult> byKey = new HashMap<>();
    private final TreeSet<Integer> redisThreads = new TreeSet<>();
    private final TreeSet<Integer> memoryThreads = new TreeSet<>();
    private final List<String> redisContenders = new ArrayList<>();
    private final List<String> memoryContenders = new ArrayList<>();
    private final List<String> warnings = new ArrayList<>();
    private List<ScriptCost.Row> scriptCost = List.of();
    private String httpTable;
    private List<HttpBenchmark.Route> http = List.of();
    private List<SanityCheck.Row> sanity = List.of();
    /** redis-benchmark's pipelined floor ({@link SanityCheck#pipelined}); {@code null} unless measured. */
    private SanityCheck.Measured pipelined;
    private final Map<String, String[]> warmups = new HashMap<>();
    private List<OutboundBenchmark.Row> outbound = List.of();
    /** {@code null} unless the outbound part measured it. */
    private ProviderQuota.Row providerQuota;
    private List<ProviderQuotaJvms.Row> providerQuotaJvms = List.of();
    private String postgres;

    Report(String started, BenchRedis redis, String redisVersion, boolean quick, String args) {
        this.started = started;
        this.redis = redis;
        this.redisVersion = redisVersion;
        this.quick = quick;
        this.args = args;
    }

    void warn(String warning) {
        System.err.println("WARNING: " + warning);
        warnings.add(warning);
    }

    String redisVersion() {
        return redisVersion;
    }

    void footprint(List<Footprint.Row> rows) {
        this.footprint = rows;
    }

    void scriptCost(List<ScriptCost.Row> rows) {
        this.scriptCost = rows;
    }

    List<ScriptCost.Row> scriptCost() {
        return scriptCost;
    }

    void http(String table, List<HttpBenchmark.Route> routes) {
        this.httpTable = table;
        this.http = routes;
    }

    void outbound(List<OutboundBenchmark.Row> rows) {
        this.outbound = rows;
    }

    void postgres(String markdown) {
        this.postgres = markdown;
    }

    void providerQuota(ProviderQuota.Row row) {
        this.providerQuota = row;
    }

    void providerQuotaJvms(List<ProviderQuotaJvms.Row> rows) {
        this.providerQuotaJvms = List.copyOf(rows);
    }

    void sanity(List<SanityCheck.Row> rows) {
        this.sanity = rows;
    }

    void pipelined(SanityCheck.Measured measured) {
        this.pipelined = measured;
    }

    /**
     * The steady warm-ups the Redis trials logged ({@link RedisBenchmark#WARMUP_LOG_PROPERTY}), one
     * tab-separated line each (fields: {@link RedisBenchmark#LOG_CONTENDER} and the constants beside it).
     */
    void warmups(List<String> lines) {
        for (String line : lines) {
            String[] f = line.split("\t");
            if (f.length > RedisBenchmark.LOG_WINDOWS) {
                warmups.put(key(f[RedisBenchmark.LOG_METHOD], f[RedisBenchmark.LOG_MODE],
                        f[RedisBenchmark.LOG_CONTENDER], f[RedisBenchmark.LOG_KEYS],
                        Integer.parseInt(f[RedisBenchmark.LOG_THREADS])), f);
            }
        }
    }

    void results(Collection<RunResult> results) {
        for (RunResult result : results) {
            var params = result.getParams();
            String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
            String contender = params.getParam("contender");
            boolean memory = params.getBenchmark().contains("MemoryBenchmark");
            String shape = memory ? params.getParam("path") : params.getParam("keys");
            byKey.put(key(method, params.getMode().shortLabel(), contender, shape, params.getThreads()), result);
            (memory ? memoryThreads : redisThreads).add(params.getThreads());
            List<String> seen = memory ? memoryContenders : redisContenders;
            if (!seen.contains(contender)) {
                seen.add(contender);
            }
            if (params.getWarmup().getCount() < 1) {
                warnings.add("no warm-up for " + contender);
            }
        }
        order(redisContenders, RedisContender.NAMES);
        order(memoryContenders, MemoryBenchmark.NAMES);
    }

    private static void order(List<String> seen, String[] canonical) {
        List<String> sorted = new ArrayList<>();
        for (String name : canonical) {
            if (seen.contains(name)) {
                sorted.add(name);
            }
        }
        seen.clear();
        seen.addAll(sorted);
    }

    private static String key(String method, String mode, String contender, String shape, int threads) {
        return method + "|" + mode + "|" + contender + "|" + shape + "|" + threads;
    }

    private Result<?> primary(String method, String mode, String contender, String shape, int threads) {
        RunResult result = byKey.get(key(method, mode, contender, shape, threads));
        return result == null ? null : result.getPrimaryResult();
    }

    /** Decisions per second, whatever unit JMH reported in. */
    private Double perSecond(String method, String contender, String shape, int threads) {
        Result<?> result = primary(method, "thrpt", contender, shape, threads);
        return result == null ? null : result.getScore() * perSecondFactor(result.getScoreUnit());
    }

    private Double errorPercent(String method, String contender, String shape, int threads) {
        Result<?> result = primary(method, "thrpt", contender, shape, threads);
        if (result == null || Double.isNaN(result.getScoreError()) || result.getScore() == 0) {
            return null;
        }
        return 100 * result.getScoreError() / result.getScore();
    }

    /** A percentile of the sampled latency, in microseconds. */
    private Double percentileMicros(String method, String contender, String shape, int threads, double percentile) {
        Result<?> result = primary(method, "sample", contender, shape, threads);
        return result == null ? null
                : result.getStatistics().getPercentile(percentile) * microsFactor(result.getScoreUnit());
    }

    private static double perSecondFactor(String unit) {
        return switch (unit) {
            case "ops/s" -> 1;
            case "ops/ms" -> 1e3;
            case "ops/us" -> 1e6;
            case "ops/ns" -> 1e9;
            default -> throw new IllegalStateException("unexpected unit " + unit);
        };
    }

    private static double microsFactor(String unit) {
        return switch (unit) {
            case "s/op" -> 1e6;
            case "ms/op" -> 1e3;
            case "us/op" -> 1;
            case "ns/op" -> 1e-3;
            default -> throw new IllegalStateException("unexpected unit " + unit);
        };
    }

    String footprintTable() {
        StringBuilder md = new StringBuilder();
        md.append("| contender | MEMORY USAGE after 1 decision (B) | after 100 on one key (B) "
                        + "| used_memory growth per key over ")
                .append(Footprint.KEYS)
                .append(" keys (B) | commands the client sent per decision: allowed fresh / allowed warm / rejected | ")
                .append("commands Redis ran per decision, incl. inside scripts: allowed fresh / warm / rejected "
                        + "| allowed warm, by command | rejected, by command |\n");
        md.append("|---|---:|---:|---:|---:|---:|---|---|\n");
        for (Footprint.Row row : footprint) {
            md.append("| ").append(row.contender())
                    .append(" | ").append(row.bytesAfterOne())
                    .append(" | ").append(row.bytesAfterHundred())
                    .append(" | ").append(String.format("%.0f", row.usedMemoryPerKey()))
                    .append(" | ").append(Footprint.format(row.tripsFresh()))
                    .append(" / ").append(Footprint.format(row.tripsWarm()))
                    .append(" / ").append(Footprint.format(row.tripsRejected()))
                    .append(" | ").append(Footprint.format(row.commandsFresh()))
                    .append(" / ").append(Footprint.format(row.commandsWarm()))
                    .append(" / ").append(Footprint.format(row.commandsRejected()))
                    .append(" | ").append(row.warmByName())
                    .append(" | ").append(row.rejectedByName())
                    .append(" |\n");
        }
        return md.toString();
    }

    String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("## Run of ").append(started)
                .append(quick ? " (QUICK: smoke run, not for conclusions)" : "").append("\n\n");
        md.append("- arguments: `").append(args.isEmpty() ? "(none)" : args).append("`\n");
        md.append("- machine: ").append(Runtime.getRuntime().availableProcessors())
                .append(" CPUs (availableProcessors), ")
                .append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version")).append(' ')
                .append(System.getProperty("os.arch")).append('\n');
        md.append("- Java: ").append(System.getProperty("java.vm.name"))
                .append(' ').append(System.getProperty("java.runtime.version"))
                .append(" (").append(System.getProperty("java.vendor")).append(")\n");
        md.append("- Redis: ").append(redisVersion)
                .append(!redis.owned() ? ", from REDIS_URL"
                        : System.getProperty(BenchRedis.SERVER_PROPERTY) != null
                        ? ", " + System.getProperty(BenchRedis.SERVER_PROPERTY) + " started by the run"
                        : ", embedded-redis binary started by the run")
                .append(", loopback\n");
        if (!byKey.isEmpty()) {
            RunResult any = byKey.values().iterator().next();
            var p = any.getParams();
            md.append("- JMH ").append(p.getJmhVersion()).append(": ").append(p.getForks()).append(" fork, warm-up ")
                    .append(p.getWarmup().getCount()).append(" x ").append(time(p.getWarmup().getTime()))
                    .append(", measurement ").append(p.getMeasurement().getCount()).append(" x ")
                    .append(time(p.getMeasurement().getTime())).append('\n');
        }
        // The sanity check and the steadiness table find warnings of their own: build them first.
        List<String> flags = new ArrayList<>();
        StringBuilder sanityMd = new StringBuilder();
        StringBuilder steadyMd = new StringBuilder();
        if (!sanity.isEmpty()) {
            sanityTable(sanityMd, flags);
        }
        if (!redisContenders.isEmpty()) {
            steadiness(steadyMd, flags);
        }
        for (String warning : warnings) {
            md.append("- WARNING: ").append(warning).append('\n');
        }
        for (String flag : flags) {
            md.append("- WARNING: ").append(flag).append('\n');
        }
        md.append('\n');
        targets(md);
        md.append(sanityMd);
        if (!footprint.isEmpty()) {
            md.append("### Redis bytes and round trips per decision\n\n").append(footprintTable()).append('\n');
        }
        if (!redisContenders.isEmpty()) {
            redisTables(md);
            md.append(steadyMd);
        }
        if (!memoryContenders.isEmpty()) {
            memoryTables(md);
        }
        if (!scriptCost.isEmpty()) {
            md.append("### Redis time per decision (INFO commandstats)\n\n")
                    .append(ScriptCost.table(scriptCost)).append('\n');
        }
        if (!outbound.isEmpty()) {
            md.append("### Outbound: waiting for a permit under contention\n\n")
                    .append(OutboundBenchmark.table(outbound));
        }
        if (providerQuota != null) {
            md.append("### Outbound: a strict provider's quota\n\n").append(ProviderQuota.table(providerQuota));
        }
        if (!providerQuotaJvms.isEmpty()) {
            md.append("### Outbound: a strict provider's quota, three JVMs\n\n")
                    .append(ProviderQuotaJvms.table(providerQuotaJvms));
        }
        if (postgres != null) {
            md.append("### Postgres store beside Redis\n\n").append(postgres).append('\n');
        }
        if (httpTable != null) {
            md.append("### HTTP: a servlet with and without the filter\n\n").append(httpTable).append('\n');
        }
        return md.toString();
    }

    private static String time(TimeValue value) {
        return value.toString().replace(" ", "");
    }

    private void redisTables(StringBuilder md) {
        List<String> shapes = List.of("1", "100000");
        md.append("### Redis: decisions per second (Throughput; ± is JMH's 99.9% error as % of the score)\n\n");
        md.append("| keys | threads | api |");
        redisContenders.forEach(c -> md.append(' ').append(c).append(" |"));
        md.append('\n').append("|---|---:|---|").append("---:|".repeat(redisContenders.size())).append('\n');
        for (String api : List.of("sync", "async")) {
            for (String shape : shapes) {
                for (int threads : redisThreads) {
                    md.append("| ").append(keysLabel(shape)).append(" | ").append(threads)
                            .append(" | ").append(api).append(" |");
                    for (String c : redisContenders) {
                        md.append(' ').append(rate(perSecond(api, c, shape, threads),
                                errorPercent(api, c, shape, threads))).append(" |");
                    }
                    md.append('\n');
                }
            }
        }
        md.append("\n### Redis: sync latency, p50 / p99 in µs (SampleTime)\n\n");
        md.append("| keys | threads |");
        redisContenders.forEach(c -> md.append(' ').append(c).append(" |"));
        md.append('\n').append("|---|---:|").append("---:|".repeat(redisContenders.size())).append('\n');
        for (String shape : shapes) {
            for (int threads : redisThreads) {
                md.append("| ").append(keysLabel(shape)).append(" | ").append(threads).append(" |");
                for (String c : redisContenders) {
                    Double p50 = percentileMicros("sync", c, shape, threads, 50);
                    Double p99 = percentileMicros("sync", c, shape, threads, 99);
                    md.append(' ').append(p50 == null ? "–" : String.format("%.0f / %.0f", p50, p99)).append(" |");
                }
                md.append('\n');
            }
        }

        List<String[]> pairs = new ArrayList<>();
        for (String c : redisContenders) {
            if (c.startsWith("sluice-") && redisContenders.contains("floor")) {
                pairs.add(new String[] {c, "floor"});
            }
        }
        for (String peer : List.of("bucket4j", "bucket4j-batching", "redisson")) {
            for (String sluice : List.of(TB, "sluice-gcra")) {
                if (redisContenders.contains(sluice) && redisContenders.contains(peer)) {
                    pairs.add(new String[] {sluice, peer});
                }
            }
        }
        if (pairs.isEmpty()) {
            return;
        }
        md.append("\n### Redis: ratios Sluice ÷ peer, same run\n\n");
        md.append("Throughput ratio: above 1 means Sluice decides more per second. "
                + "Latency ratio (p99): below 1 means Sluice answers sooner.\n\n");
        md.append("| keys | threads | api |");
        pairs.forEach(p -> md.append(' ').append(shortName(p[0])).append(" ÷ ").append(p[1]).append(" |"));
        md.append('\n').append("|---|---:|---|").append("---:|".repeat(pairs.size())).append('\n');
        for (String api : List.of("sync", "async")) {
            for (String shape : shapes) {
                for (int threads : redisThreads) {
                    md.append("| ").append(keysLabel(shape)).append(" | ").append(threads)
                            .append(" | ").append(api).append(" thrpt |");
                    for (String[] p : pairs) {
                        md.append(' ').append(ratio(perSecond(api, p[0], shape, threads),
                                perSecond(api, p[1], shape, threads))).append(" |");
                    }
                    md.append('\n');
                }
            }
        }
        for (String shape : shapes) {
            for (int threads : redisThreads) {
                md.append("| ").append(keysLabel(shape)).append(" | ").append(threads).append(" | sync p99 |");
                for (String[] p : pairs) {
                    md.append(' ').append(ratio(percentileMicros("sync", p[0], shape, threads, 99),
                            percentileMicros("sync", p[1], shape, threads, 99))).append(" |");
                }
                md.append('\n');
            }
        }
        md.append('\n');
    }

    /**
     * Whether any of the space-separated milliseconds exceeds {@link SteadyLoad#JIT_QUIET} of
     * {@code iterationMillis}.
     */
    static boolean compiledWhileMeasured(String compileMillis, long iterationMillis) {
        for (String ms : compileMillis.trim().split(" +")) {
            if (!ms.isEmpty() && Long.parseLong(ms) > SteadyLoad.JIT_QUIET * iterationMillis) {
                return true;
            }
        }
        return false;
    }

    /**
     * The floor beside the plain {@code evalSha} loop and redis-benchmark at each thread count,
     * with the verdict ({@link SanityCheck#FACTOR}), and this run's own floor trial against the
     * floor's new JVMs ({@link SanityCheck#typical}).
     */
    private void sanityTable(StringBuilder md, List<String> flags) {
        md.append("### Sanity check: is the floor a floor?\n\n");
        md.append(String.format(Locale.ROOT, "The floor (its JMH trial, sync, 100,000 keys, run again in new JVMs) "
                + "beside the same script run a plain way: a loop of Redisson `RScript.evalSha` from as many threads, "
                + "each in a new JVM too, alternated with the floor's; and `redis-benchmark`'s `EVALSHA` with as many "
                + "connections, against the same Redis. A correct floor is at most %.0f %% below the plain loop (they "
                + "make the same call), judged by the median over rounds of the floor's JVM ÷ the plain loop's beside "
                + "it (a drift of the machine cancels within a round), and within a factor of %.1f of redis-benchmark "
                + "(client and Redis share the cores: Redisson spends about three times redis-benchmark's CPU per "
                + "request, see the CPU figures below the table). Medians of several JVMs, because one JVM at one or "
                + "64 threads settles at a level that moves by 30-40 %% from one JVM to the next on two cores. The "
                + "last column says whether this run's own floor trial, the one every ratio \"÷ floor\" divides by, "
                + "was typical of them.%n%n",
                100 * SanityCheck.PLAIN_TOLERANCE, SanityCheck.FACTOR));
        md.append("| threads | floor, new JVMs (median) | plain evalSha loop, new JVMs (median) "
                + "| redis-benchmark EVALSHA | floor ÷ plain loop (median of rounds) "
                + "| verdict | this run's floor trial |\n");
        md.append("|---:|---|---|---:|---:|---|---|\n");
        for (SanityCheck.Row row : sanity) {
            double floor = row.floor();
            double plain = row.plainLoop();
            double bench = row.redisBenchmark().perSecond();
            String verdict;
            if (Double.isNaN(floor)) {
                verdict = "NOT trustworthy: the floor's new JVMs did not measure";
            } else if (Double.isNaN(bench)) {
                verdict = "could not run: " + row.redisBenchmark().note();
            } else {
                verdict = SanityCheck.verdict(floor, row.floorToPlain(), bench);
            }
            Double trial = perSecond("sync", "floor", "100000", row.threads());
            String typical = trial == null ? "not measured in this run" : SanityCheck.typical(trial, row.floorForks());
            md.append("| ").append(row.threads())
                    .append(" | ").append(Double.isNaN(floor) ? "–" : rate(floor, null))
                    .append(" (").append(SanityCheck.rates(row.floorForks())).append(')')
                    .append(" | ").append(Double.isNaN(plain) ? "–" : rate(plain, null))
                    .append(" (").append(SanityCheck.rates(row.plainForks())).append(')')
                    .append(" | ").append(Double.isNaN(bench) ? "–" : rate(bench, null))
                    .append(" | ").append(Double.isNaN(row.floorToPlain()) ? "–"
                            : String.format(Locale.ROOT, "%.2f", row.floorToPlain()))
                    .append(" | ").append(verdict)
                    .append(" | ").append(trial == null ? "" : rate(trial, null) + ": ").append(typical).append(" |\n");
            if (!verdict.startsWith("trustworthy")) {
                flags.add("sanity check at " + row.threads() + " threads: " + verdict);
            }
            if (!typical.startsWith("typical") && trial != null) {
                flags.add("sanity check at " + row.threads() + " threads: this run's floor trial " + typical);
            }
        }
        md.append("\n");
        for (SanityCheck.Row row : sanity) {
            md.append("- ").append(row.threads()).append(" threads: the floor's JVMs: ")
                    .append(String.join("; ", row.floorForks().stream().map(SanityCheck.Measured::note).toList()))
                    .append(". The plain loop's JVMs: ")
                    .append(String.join("; ", row.plainForks().stream()
                            .map(m -> m.note() + " (" + SanityCheck.cpu(m) + ")").toList()))
                    .append(". redis-benchmark ").append(row.redisBenchmark().note()).append(" (")
                    .append(SanityCheck.cpu(row.redisBenchmark())).append(")\n");
        }
        md.append('\n');
    }

    /**
     * Per trial: the steady warm-up before JMH's own (how long, whether throughput stopped
     * climbing) and JMH's measured iterations, flagged when the last two differ by more than
     * {@link SteadyLoad#TOLERANCE}.
     */
    private void steadiness(StringBuilder md, List<String> flags) {
        md.append(String.format(Locale.ROOT, "### Steady state: warm-up and measured iterations per trial%n%n"
                + "Before JMH's warm-up, each trial ran its contender from as many threads until throughput stopped "
                + "climbing (the mean of its last %d s at most %.0f %% above the %d s before) and the JIT compiler "
                + "went quiet (at most %.0f %% of those %d s spent compiling); at most `--steady-max` seconds, 30 by "
                + "default. A trial whose last two measured iterations differ by more than %.0f %% is flagged NOT "
                + "steady: read its figures with care.%n%n",
                SteadyLoad.SPAN.toSeconds(), 100 * SteadyLoad.TOLERANCE, SteadyLoad.SPAN.toSeconds(),
                100 * SteadyLoad.JIT_QUIET, SteadyLoad.SPAN.toSeconds(), 100 * SteadyLoad.TOLERANCE));
        md.append("| contender | api | keys | threads | steady warm-up | measured iterations (decisions/s) "
                + "| JIT ms per measured iteration | last two apart | steady |\n");
        md.append("|---|---|---|---:|---|---|---|---:|---|\n");
        for (String api : List.of("sync", "async")) {
            for (String shape : List.of("1", "100000")) {
                for (int threads : redisThreads) {
                    for (String c : redisContenders) {
                        RunResult result = byKey.get(key(api, "thrpt", c, shape, threads));
                        if (result == null) {
                            continue;
                        }
                        List<Double> iterations = new ArrayList<>();
                        for (BenchmarkResult benchmark : result.getBenchmarkResults()) {
                            for (IterationResult iteration : benchmark.getIterationResults()) {
                                Result<?> primary = iteration.getPrimaryResult();
                                iterations.add(primary.getScore() * perSecondFactor(primary.getScoreUnit()));
                            }
                        }
                        double spread = SteadyLoad.spread(iterations);
                        boolean steady = !(spread > SteadyLoad.TOLERANCE);
                        String[] warm = warmups.get(key(api, "thrpt", c, shape, threads));
                        md.append("| ").append(c).append(" | ").append(api).append(" | ").append(keysLabel(shape))
                                .append(" | ").append(threads)
                                .append(" | ").append(warm == null ? "–"
                                        : warm[RedisBenchmark.LOG_SECONDS] + " s, "
                                                + (Boolean.parseBoolean(warm[RedisBenchmark.LOG_STEADY])
                                                        ? "steady" : "NOT STEADY"))
                                .append(" | ").append(SanityCheck.rates(iterations))
                                .append(" | ").append(warm == null || warm.length < RedisBenchmark.LOG_FIELDS ? "–"
                                        : warm[RedisBenchmark.LOG_COMPILE_MILLIS].replace(" ", ", "))
                                .append(" | ").append(Double.isNaN(spread) ? "–"
                                        : String.format(Locale.ROOT, "%.0f %%", 100 * spread))
                                .append(" | ").append(steady ? "yes" : "**NOT steady**").append(" |\n");
                        if (!steady) {
                            flags.add(String.format(Locale.ROOT,
                                    "NOT steady: %s %s, %s keys, %d threads: last two iterations %.0f %% apart",
                                    c, api, keysLabel(shape), threads, 100 * spread));
                        }
                        if (warm != null && warm.length >= RedisBenchmark.LOG_FIELDS
                                && compiledWhileMeasured(warm[RedisBenchmark.LOG_COMPILE_MILLIS],
                                        Long.parseLong(warm[RedisBenchmark.LOG_ITERATION_MILLIS]))) {
                            flags.add(String.format(Locale.ROOT, "%s %s, %s keys, %d threads: the JIT compiled over "
                                    + "%.0f %% of a measured iteration (%s ms): measured while compiling",
                                    c, api, keysLabel(shape), threads,
                                    100 * SteadyLoad.JIT_QUIET, warm[RedisBenchmark.LOG_COMPILE_MILLIS]));
                        }
                        if (warm != null && !Boolean.parseBoolean(warm[RedisBenchmark.LOG_STEADY])) {
                            flags.add(String.format(Locale.ROOT,
                                    "%s %s, %s keys, %d threads: still climbing or compiling after its %s s warm-up",
                                    c, api, keysLabel(shape), threads, warm[RedisBenchmark.LOG_SECONDS]));
                        }
                    }
                }
            }
        }
        md.append('\n');
    }

    private void memoryTables(StringBuilder md) {
        md.append("### In memory: millions of decisions per second (Throughput), and p50 / p99 in ns (SampleTime)\n\n");
        md.append("| path | threads |");
        memoryContenders.forEach(c -> md.append(' ').append(c).append(" |"));
        md.append('\n').append("|---|---:|").append("---:|".repeat(memoryContenders.size())).append('\n');
        for (String path : List.of("allowed", "rejected")) {
            for (int threads : memoryThreads) {
                md.append("| ").append(path).append(" | ").append(threads).append(" |");
                for (String c : memoryContenders) {
                    Double rate = perSecond("decide", c, path, threads);
                    Double p50 = percentileMicros("decide", c, path, threads, 50);
                    Double p99 = percentileMicros("decide", c, path, threads, 99);
                    md.append(' ').append(rate == null ? "–" : String.format("%.1f M/s", rate / 1e6))
                            .append(p50 == null ? "" : String.format(" (%.0f / %.0f ns)", p50 * 1e3, p99 * 1e3))
                            .append(" |");
                }
                md.append('\n');
            }
        }
        if (memoryContenders.contains("sluice-memory") && memoryContenders.size() > 1) {
            md.append("\nThroughput ratio sluice-memory ÷ peer, same run (above 1: Sluice faster):\n\n");
            md.append("| path | threads |");
            List<String> peers = memoryContenders.stream().filter(c -> !c.equals("sluice-memory")).toList();
            peers.forEach(c -> md.append(" ÷ ").append(c).append(" |"));
            md.append('\n').append("|---|---:|").append("---:|".repeat(peers.size())).append('\n');
            for (String path : List.of("allowed", "rejected")) {
                for (int threads : memoryThreads) {
                    md.append("| ").append(path).append(" | ").append(threads).append(" |");
                    for (String peer : peers) {
                        md.append(' ').append(ratio(perSecond("decide", "sluice-memory", path, threads),
                                perSecond("decide", peer, path, threads))).append(" |");
                    }
                    md.append('\n');
                }
            }
        }
        md.append('\n');
    }

    /**
     * The performance targets beside what this run measured: one line per target and shape, "–"
     * where the run did not measure it. Each divides by a reference measured in the same run.
     */
    private void targets(StringBuilder md) {
        List<String[]> rows = new ArrayList<>();
        for (String sluice : List.of(TB, "sluice-gcra")) {
            rows.add(atLeast("Redis kept busy: " + shortName(sluice) + ", 100,000 keys, "
                            + 16 * RedisBenchmark.IN_FLIGHT + " in flight (16 threads, async) ÷ redis-benchmark's "
                            + "pipelined EVALSHA of the floor (" + SanityCheck.PIPELINED_CONNECTIONS
                            + " connections, pipeline " + SanityCheck.PIPELINE + ")",
                    ratioOf(perSecond("async", sluice, "100000", 16),
                            pipelined == null || Double.isNaN(pipelined.perSecond()) ? null : pipelined.perSecond()),
                    0.5));
        }
        for (String sluice : List.of(TB, "sluice-gcra")) {
            rows.add(atMost("a lone decision: " + shortName(sluice) + ", 1 thread, p50 latency ÷ the floor's "
                            + "(the same RScript.evalSha call as the plain loop, which samples no latency)",
                    ratioOf(percentileMicros("sync", sluice, "100000", 1, 50),
                            percentileMicros("sync", "floor", "100000", 1, 50)), 1.1));
        }
        ScriptCost.Row loneFloor = scriptCost.stream()
                .filter(r -> r.algorithm().equals(ScriptCost.FLOOR) && r.shape().equals(ScriptCost.LONE))
                .findFirst().orElse(null);
        for (ScriptCost.Row row : scriptCost) {
            if (loneFloor != null && row != loneFloor && row.shape().equals(ScriptCost.LONE)) {
                rows.add(atMost("Redis µs per lone decision ÷ the floor's, " + row.algorithm() + " (commandstats)",
                        row.microsPerDecision() / loneFloor.microsPerDecision(), 1.2));
            }
        }
        for (String path : List.of("allowed", "rejected")) {
            for (int threads : List.of(1, 2)) {
                rows.add(atLeast("in memory, " + path + ", " + threads
                                + " thread(s): sluice-memory ÷ bucket4j-map throughput (time per decision at most 1x)",
                        ratioOf(perSecond("decide", "sluice-memory", path, threads),
                                perSecond("decide", "bucket4j-map", path, threads)), 1.0));
            }
        }
        for (String path : List.of("allowed", "rejected")) {
            for (int threads : List.of(1, 2)) {
                Double bucket4j = bytesPerDecision("bucket4j-map", path, threads);
                rows.add(atMost("in memory, " + path + ", " + threads
                                + " thread(s): bytes allocated per decision, sluice-memory ≤ bucket4j-map's",
                        bytesPerDecision("sluice-memory", path, threads), bucket4j));
            }
        }
        for (HttpBenchmark.Route route : http) {
            Double target = HttpBenchmark.target(route);
            if (target != null) {
                String endpoint = route.path().startsWith("/work/")
                        ? "endpoint doing " + HttpBenchmark.WORK_MICROS + " µs of work"
                        : "trivial servlet";
                rows.add(atLeast("HTTP req/s, " + endpoint + ", filter on "
                                + route.path().substring(route.path().lastIndexOf('/') + 1) + " ÷ no filter",
                        route.median() / HttpBenchmark.withoutFilter(http, route).median(), target));
            }
        }
        for (SanityCheck.Row row : sanity) {
            double ratio = row.floorToPlain();
            rows.add(atLeast("the floor passes its sanity check: floor ÷ plain evalSha loop, " + row.threads()
                    + " thread(s) (median of rounds)", Double.isNaN(ratio) ? null : ratio,
                    1 - SanityCheck.PLAIN_TOLERANCE));
        }
        rows.add(atLeast("outbound: accepted ÷ a strict provider's quota (three instances at 9.25/s, provider 10/s)",
                providerQuota == null ? null : providerQuota.share(), ProviderQuota.TARGET));
        if (!providerQuotaJvms.isEmpty()) {
            for (boolean paused : new boolean[] {false, true}) {
                rows.add(atLeast("outbound, three JVMs x " + ProviderQuotaJvms.THREADS_PER_JVM + " threads at 9/s, "
                                + "provider 10/s" + (paused ? ", paused in turn" : "")
                                + ": Sluice's accepted ÷ Bucket4j's (medians of rounds)",
                        ProviderQuotaJvms.sluiceToBucket4j(providerQuotaJvms, paused), 1.0));
            }
            Long noPermit = ProviderQuotaJvms.sluiceWithoutPermit(providerQuotaJvms);
            rows.add(new String[] {"outbound, three JVMs: Sluice's calls without a permit within "
                    + ProviderQuotaJvms.MAX_WAIT.toSeconds() + " s (a waiter that lost its place), all rounds",
                    noPermit == null ? "–" : String.format("%,d", noPermit), "0",
                    noPermit == null ? "–" : noPermit == 0 ? "yes" : "no"});
        }
        md.append("### The targets, this run\n\n");
        if (!sanity.isEmpty()) {
            md.append("The floor's p50 stands for the plain loop's: the sanity check below says how far the floor's "
                    + "trial is from the plain loop at each thread count.\n\n");
        }
        md.append("| what | measured | target | met |\n|---|---:|---:|---|\n");
        for (String[] row : rows) {
            md.append("| ").append(String.join(" | ", row)).append(" |\n");
        }
        md.append('\n');
    }

    /** JMH's {@code gc.alloc.rate.norm} of an in-memory throughput trial: bytes per decision, or null. */
    private Double bytesPerDecision(String contender, String path, int threads) {
        RunResult result = byKey.get(key("decide", "thrpt", contender, path, threads));
        Result<?> bytes = result == null ? null
                : result.getAggregatedResult().getSecondaryResults().get("gc.alloc.rate.norm");
        return bytes == null ? null : bytes.getScore();
    }

    private static Double ratioOf(Double a, Double b) {
        return a == null || b == null || b == 0 ? null : a / b;
    }

    private static String[] atLeast(String what, Double measured, double target) {
        return new String[] {what, figure(measured), String.format("≥ %.2f", target),
                measured == null ? "–" : measured >= target ? "yes" : "no"};
    }

    private static String[] atMost(String what, Double measured, Double target) {
        return new String[] {what, figure(measured), target == null ? "–" : "≤ " + figure(target),
                measured == null || target == null ? "–" : measured <= target ? "yes" : "no"};
    }

    private static String figure(Double value) {
        return value == null ? "–" : value >= 10 ? String.format("%.0f", value) : String.format("%.2f", value);
    }

    private static String shortName(String contender) {
        return contender.replace("sluice-", "sluice ");
    }

    private static String keysLabel(String shape) {
        return "1".equals(shape) ? "1 hot" : String.format("%,d", Integer.parseInt(shape));
    }

    private static String rate(Double perSecond, Double errorPercent) {
        if (perSecond == null) {
            return "–";
        }
        return String.format("%,.0f", perSecond)
                + (errorPercent == null ? "" : String.format(" ±%.0f%%", errorPercent));
    }

    private static String ratio(Double a, Double b) {
        return a == null || b == null || b == 0 ? "–" : String.format("%.2f", a / b);
    }
}
