package dev.sluice.benchmarks;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Runs decisions from a number of threads in timed windows: to warm a contender until its
 * throughput stops climbing, before JMH measures it ({@link RedisBenchmark}'s set-up), and to
 * measure the plain {@code evalSha} loop of the sanity check ({@link SanityCheck}).
 *
 * <p>Why: JMH's warm-up is a fixed number of iterations. Issue 26 found the floor measured while
 * still climbing (2.3k decisions/s in its one 1 s warm-up, then 5.8k and 10.3k): 16 threads
 * each need a connection of their own (Redisson's pool opens them on demand) and Redisson's and
 * Netty's code must be compiled, which on a loaded 2-core machine takes seconds. Running the
 * contender from as many threads as the measurement opens those connections and compiles that
 * code; stopping only when throughput has stopped climbing makes the start fair for every
 * contender, whatever it needs.
 *
 * <p>Flat throughput alone did not mean warm: the JIT compiler goes on compiling Redisson's,
 * Netty's and JMH's code for 10 to 30 s on this machine, on the same two cores as the client and
 * Redis, long after throughput moves by less than {@link #TOLERANCE} in 2 s. A JMH fork is a new
 * JVM, so the floor was measured while its JVM still compiled, and the sanity check's plain loop,
 * in the launcher whose code earlier parts had compiled, was not: the floor came out 23-44 % below
 * the plain way. So the warm-up also waits until the compiler is {@linkplain #compilerQuiet quiet}.
 */
final class SteadyLoad {

    /**
     * The last {@link #SPAN} of warm-up may exceed the span before by this fraction and still
     * count as "stopped climbing", and the last two measured iterations may differ by this
     * fraction and still count as steady. 20 % is a judgement, not a measurement: far below the
     * 78 % by which the still-climbing floor moved between iterations, and above the few
     * percent JMH's iterations of a warm trial usually differ by; on a loaded machine noise alone
     * exceeds it, and the report rightly flags that.
     */
    static final double TOLERANCE = 0.20;

    /**
     * The warm-up compares the mean of its last 4 s with the mean of the 4 s before, and asks the
     * JIT to be quiet over those last 4 s. Spans of 1 s stopped on a neighbour's passing burst
     * while throughput still climbed; spans of 2 s stopped in a lull between two of the JIT's
     * bursts: the floor's 16 threads in a new JVM ran at 13k decisions/s from 8 to 14 s while the
     * compiler did 44 to 303 ms a second, then, after one more burst of C2 compilation at 14 s,
     * at 18.5k, the rate of the plain loop (2026-12-01, quiet machine; a JMH trial warmed over 2 s
     * spans stopped at 12 s and measured 15k and 13k).
     */
    static final Duration SPAN = Duration.ofSeconds(4);

    /**
     * The JIT counts as quiet when it compiled for at most this share of the last {@link #SPAN}
     * (5 %: 200 ms in 4 s). Measured here with 16 threads of the plain {@code evalSha} loop in one
     * JVM: while it compiled about 1 s per second the client spent 130-240 µs of CPU per decision,
     * at 150 ms per second 68 µs, and from about 13 ms per second on 59-61 µs.
     */
    static final double JIT_QUIET = 0.05;

    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();

    /** One step of one thread: makes some decisions starting at key index {@code next}, returns how many. */
    @FunctionalInterface
    interface Step {
        int run(int next) throws Exception;
    }

    /**
     * What a warm-up or measurement saw: decisions per second of each window, in order, and the
     * milliseconds the JIT compiler spent in each (empty where the JVM does not tell).
     */
    record Result(List<Double> windows, List<Long> compileMillis, boolean steady, long decisions, Duration took) {
    }

    private SteadyLoad() {
    }

    /** One blocking decision per step, as {@link RedisBenchmark#sync} makes them. */
    static Step sync(RedisContender contender, int keys) {
        return next -> {
            contender.decide(next % keys);
            return 1;
        };
    }

    /** {@link RedisBenchmark#IN_FLIGHT} decisions in flight per step, as {@link RedisBenchmark#async} makes them. */
    static Step async(RedisContender contender, int keys) {
        return next -> {
            CompletableFuture<?>[] pending = new CompletableFuture<?>[RedisBenchmark.IN_FLIGHT];
            for (int j = 0; j < pending.length; j++) {
                pending[j] = contender.decideAsync((next + j) % keys);
            }
            CompletableFuture.allOf(pending).join();
            return pending.length;
        };
    }

    /**
     * Runs {@code step} from {@code threads} threads in windows of {@code window} until it is
     * {@linkplain #steady steady}: throughput has stopped climbing and the compiler has gone
     * quiet; or until {@code max} has passed (then {@link Result#steady()} is false).
     */
    static Result warm(int threads, Duration window, Duration max, Step step) {
        long windows = Math.max(1, max.toNanos() / window.toNanos());
        int span = (int) Math.max(1, SPAN.toNanos() / window.toNanos());
        return run(threads, window, (int) windows, span, step);
    }

    /** Runs {@code step} from {@code threads} threads for {@code count} windows of {@code window}. */
    static Result measure(int threads, Duration window, int count, Step step) {
        return run(threads, window, count, 0, step);
    }

    /**
     * Whether the mean of the last {@code span} windows is at most {@link #TOLERANCE} above the
     * mean of the {@code span} before: throughput has stopped rising. Needs {@code 2 * span}
     * windows; falling counts as stopped.
     */
    static boolean stoppedClimbing(List<Double> windows, int span) {
        int n = windows.size();
        if (n < 2 * span) {
            return false;
        }
        double before = 0;
        double last = 0;
        for (int i = 0; i < span; i++) {
            before += windows.get(n - 2 * span + i);
            last += windows.get(n - span + i);
        }
        return last <= before * (1 + TOLERANCE);
    }

    /**
     * Whether the JIT compiled for at most {@link #JIT_QUIET} of the last {@code span} windows of
     * {@code window} each. Needs {@code span} windows. A JVM that does not measure compilation
     * time ({@code compileMillis} empty) counts as quiet: throughput alone decides there.
     */
    static boolean compilerQuiet(List<Long> compileMillis, int span, Duration window) {
        if (compileMillis.isEmpty() && !compilationTimed()) {
            return true;
        }
        int n = compileMillis.size();
        if (n < span) {
            return false;
        }
        long compiled = 0;
        for (int i = n - span; i < n; i++) {
            compiled += compileMillis.get(i);
        }
        return compiled <= JIT_QUIET * span * window.toMillis();
    }

    /** {@link #stoppedClimbing} and {@link #compilerQuiet}: warm enough to measure. */
    static boolean steady(List<Double> windows, List<Long> compileMillis, int span, Duration window) {
        return stoppedClimbing(windows, span) && compilerQuiet(compileMillis, span, window);
    }

    /** Milliseconds the JIT has compiled since the JVM started; -1 if this JVM does not tell. */
    static long compiledMillis() {
        return compilationTimed() ? JIT.getTotalCompilationTime() : -1;
    }

    private static boolean compilationTimed() {
        return JIT != null && JIT.isCompilationTimeMonitoringSupported();
    }

    /**
     * How far apart the last two figures are, as a fraction of the larger: above
     * {@link #TOLERANCE}, a measurement was not steady. NaN with fewer than two.
     */
    static double spread(List<Double> iterations) {
        int n = iterations.size();
        if (n < 2) {
            return Double.NaN;
        }
        double a = iterations.get(n - 2);
        double b = iterations.get(n - 1);
        double max = Math.max(a, b);
        return max == 0 ? 0 : Math.abs(a - b) / max;
    }

    /** {@code values} separated by spaces, for a log line. */
    static String joined(List<?> values) {
        StringBuilder out = new StringBuilder();
        for (Object value : values) {
            out.append(out.length() == 0 ? "" : " ").append(value);
        }
        return out.toString();
    }

    /** The middle figure (the mean of the two middle ones for an even count); NaN for none. */
    static double median(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /** {@code span} 0: run all {@code maxWindows}; otherwise stop once {@link #stoppedClimbing} over {@code span}. */
    private static Result run(int threads, Duration window, int maxWindows, int span, Step step) {
        LongAdder done = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            // Each thread from its own offset, as RedisBenchmark.Cursor walks the keys.
            int offset = ThreadLocalRandom.current().nextInt(1 << 20);
            Thread worker = new Thread(() -> {
                int next = offset;
                try {
                    while (!stop.get()) {
                        int made = step.run(next);
                        next = (next + made) & Integer.MAX_VALUE;
                        done.add(made);
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                    stop.set(true);
                }
            }, "steady-load-" + t);
            worker.setDaemon(true);
            workers.add(worker);
        }
        long start = System.nanoTime();
        workers.forEach(Thread::start);
        List<Double> windows = new ArrayList<>();
        List<Long> compiled = new ArrayList<>();
        boolean steady = false;
        try {
            long last = 0;
            long lastAt = start;
            long lastCompiled = compiledMillis();
            while (windows.size() < maxWindows && !stop.get()) {
                Thread.sleep(window.toMillis());
                long now = System.nanoTime();
                long count = done.sum();
                windows.add((count - last) * 1e9 / (now - lastAt));
                long compiledNow = compiledMillis();
                if (compiledNow >= 0) {
                    compiled.add(compiledNow - lastCompiled);
                }
                last = count;
                lastAt = now;
                lastCompiled = compiledNow;
                if (span > 0 && steady(windows, compiled, span, window)) {
                    steady = true;
                    break;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stop.set(true);
            for (Thread worker : workers) {
                try {
                    worker.join(30_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        if (failure.get() != null) {
            throw new IllegalStateException("a decision failed while loading from " + threads + " threads",
                    failure.get());
        }
        return new Result(List.copyOf(windows), List.copyOf(compiled),
                span > 0 ? steady : !(spread(windows) > TOLERANCE), done.sum(),
                Duration.ofNanos(System.nanoTime() - start));
    }
}
