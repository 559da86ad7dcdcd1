package dev.sluice.benchmarks;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;
import org.redisson.api.RedissonClient;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Decisions on Redis: Sluice's {@code RedisStore} with each algorithm, the hand-written
 * one-EVALSHA floor ({@link FloorTokenBucket}) and Bucket4j's Redisson proxy manager, plain and
 * batching, all on the same Redis and the same Redisson client settings, in one run.
 *
 * <ul>
 *   <li>{@code keys = 1}: one hot key, every thread on it: the contention case (Redis serialises
 *       scripts on one key; Bucket4j's compare-and-swap retries; batching merges).</li>
 *   <li>{@code keys = 100000}: distinct keys, each thread walking them from its own offset: the
 *       many-callers case, where state is mostly absent or cold.</li>
 *   <li>{@link #sync}: one blocking decision per call, as a servlet filter makes it. Measured as
 *       decisions/s and as sampled latency (p50, p99).</li>
 *   <li>{@link #async}: {@value #IN_FLIGHT} decisions in flight per thread, then wait for all, as a
 *       non-blocking gateway would issue them: decisions/s only, since one sample covers a batch.</li>
 * </ul>
 *
 * The number of threads (1, 16, 64) is set by the launcher ({@link Main}), not here. Every
 * contender's limit is high enough that the allowed path is measured ({@link RedisContender#RATE}).
 *
 * <p>Before JMH's own warm-up, each trial's set-up runs the contender from as many threads as
 * the trial, the same way ({@link SteadyLoad#warm}), until its throughput stops climbing and the
 * JIT compiler has gone quiet (at most {@value #STEADY_MAX_PROPERTY} seconds, 30 by default): that
 * opens one connection per waiting thread and compiles the client's code, which one short JMH
 * warm-up iteration did not (issue 26: the floor was measured while still climbing, and then while
 * its new JVM still compiled). Each trial's warm-up windows, and the JIT's milliseconds in each
 * measured iteration, are appended to the file named by {@value #WARMUP_LOG_PROPERTY}, for the
 * report.
 */
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@OutputTimeUnit(TimeUnit.SECONDS)
public class RedisBenchmark {

    /** Async decisions in flight per thread. */
    public static final int IN_FLIGHT = 16;

    /** System property: the longest warm-up to a steady state, in seconds (0: none). */
    public static final String STEADY_MAX_PROPERTY = "sluice.bench.steady.max";
    /** System property: the file each trial appends its warm-up windows to. */
    public static final String WARMUP_LOG_PROPERTY = "sluice.bench.warmup.log";

    private static final Duration WINDOW = Duration.ofMillis(500);

    @Param({"sluice-token-bucket", "sluice-gcra", "sluice-sliding-window", "sluice-fixed-window",
            "sluice-sliding-log", "sluice-lettuce", "floor", "bucket4j", "bucket4j-batching", "redisson"})
    public String contender;

    @Param({"1", "100000"})
    public int keys;

    private RedissonClient client;
    private RedisContender subject;
    private BenchmarkParams params;
    private SteadyLoad.Result warm;
    private long compiledAtIterationStart;
    private final List<Long> measuredCompileMillis = new ArrayList<>();

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) {
        BenchRedis redis = BenchRedis.get();
        redis.flushIfOwned(); // each trial starts from an empty server when it is ours
        client = redis.newClient();
        String[] names = new String[keys];
        for (int i = 0; i < keys; i++) {
            // Shaped like what a filter would pass: an API key or an address.
            names[i] = keys == 1 ? "hot-caller" : "caller-" + i;
        }
        subject = RedisContender.create(contender, client, names);
        // Load the script outside the measurement, then warm to a steady state from as many threads.
        subject.decide(0);
        int seconds = Integer.getInteger(STEADY_MAX_PROPERTY, 30);
        this.params = params;
        if (seconds > 0) {
            boolean async = params.getBenchmark().endsWith(".async");
            warm = SteadyLoad.warm(params.getThreads(), WINDOW, Duration.ofSeconds(seconds),
                    async ? SteadyLoad.async(subject, keys) : SteadyLoad.sync(subject, keys));
            log(params, warm);
        }
    }

    /**
     * The JIT's time in each measured iteration, for the report: JMH's own stub is new code,
     * compiled during JMH's warm-up, and an iteration measured while the compiler still works
     * shares the two cores with it.
     */
    @Setup(Level.Iteration)
    public void startIteration() {
        compiledAtIterationStart = SteadyLoad.compiledMillis();
    }

    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        if (iteration.getType() == IterationType.MEASUREMENT && compiledAtIterationStart >= 0) {
            measuredCompileMillis.add(SteadyLoad.compiledMillis() - compiledAtIterationStart);
        }
    }

    private static String rounded(List<Double> rates) {
        StringBuilder windows = new StringBuilder();
        for (double rate : rates) {
            windows.append(windows.length() == 0 ? "" : " ").append(Math.round(rate));
        }
        return windows.toString();
    }

    private void log(BenchmarkParams params, SteadyLoad.Result warm) {
        String windows = rounded(warm.windows());
        String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
        System.out.printf(Locale.ROOT, "steady warm-up: %s %s, %d keys, %d threads: %s after %.1f s; "
                        + "decisions/s per %d ms: %s; JIT ms per window: %s%n",
                contender, method, keys, params.getThreads(),
                warm.steady() ? "steady" : "NOT STEADY (still climbing or compiling)",
                warm.took().toNanos() / 1e9, WINDOW.toMillis(), windows, SteadyLoad.joined(warm.compileMillis()));
    }

    /**
     * The fields of a line of the warm-up log ({@value #WARMUP_LOG_PROPERTY}), tab-separated, in the
     * order {@link #append} writes them: contender, method, mode, keys, threads, steady, warm-up
     * seconds, the warm-up's rates, the JIT's ms per measured iteration, an iteration's ms. Read by
     * {@link Report} and {@link SanityCheck}.
     */
    static final int LOG_CONTENDER = 0, LOG_METHOD = 1, LOG_MODE = 2, LOG_KEYS = 3, LOG_THREADS = 4, LOG_STEADY = 5,
            LOG_SECONDS = 6, LOG_WINDOWS = 7, LOG_COMPILE_MILLIS = 8, LOG_ITERATION_MILLIS = 9, LOG_FIELDS = 10;

    /** Appends the trial's warm-up and the JIT's milliseconds per measured iteration to the report's file. */
    private void append(BenchmarkParams params, SteadyLoad.Result warm) {
        String file = System.getProperty(WARMUP_LOG_PROPERTY);
        if (file != null && !file.isBlank()) {
            String method = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
            String line = String.join("\t", contender, method, params.getMode().shortLabel(), Integer.toString(keys),
                    Integer.toString(params.getThreads()), Boolean.toString(warm.steady()),
                    String.format(Locale.ROOT, "%.1f", warm.took().toNanos() / 1e9), rounded(warm.windows()),
                    SteadyLoad.joined(measuredCompileMillis),
                    Long.toString(params.getMeasurement().getTime().convertTo(TimeUnit.MILLISECONDS)))
                    + "\n";
            try {
                Files.writeString(Path.of(file), line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException("could not append the warm-up to " + file, e);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (warm != null) {
            append(params, warm);
        }
        if (subject.failures() > 0) {
            System.err.println("WARNING: " + contender + " had " + subject.failures()
                    + " store failures (timeouts or errors); its numbers include fail-open decisions");
        }
        subject.close();
        client.shutdown();
    }

    /** Each thread walks the keys from its own random offset, so threads rarely meet on one key. */
    @State(Scope.Thread)
    public static class Cursor {
        int next;

        @Setup(Level.Trial)
        public void setUp() {
            next = ThreadLocalRandom.current().nextInt(1 << 20);
        }

        int next(int bound) {
            int i = next++ % bound;
            if (next == Integer.MAX_VALUE) {
                next = 0;
            }
            return i;
        }
    }

    @Benchmark
    @BenchmarkMode({Mode.Throughput, Mode.SampleTime})
    public boolean sync(Cursor cursor) {
        return subject.decide(cursor.next(keys));
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OperationsPerInvocation(IN_FLIGHT)
    public int async(Cursor cursor) {
        CompletableFuture<?>[] pending = new CompletableFuture<?>[IN_FLIGHT];
        for (int j = 0; j < IN_FLIGHT; j++) {
            pending[j] = subject.decideAsync(cursor.next(keys));
        }
        CompletableFuture.allOf(pending).join();
        int allowed = 0;
        for (CompletableFuture<?> future : pending) {
            if (Boolean.TRUE.equals(future.join())) {
                allowed++;
            }
        }
        return allowed;
    }
}
