package dev.sluice.benchmarks;

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
     * The warm-up compares the mean of its last 2 s with the mean of the 2 s before: shorter
     * spans stopped on a neighbour's passing burst while throughput was still climbing.
     */
    static final Duration SPAN = Duration.ofSeconds(2);

    /** One step of one thread: makes some decisions starting at key index {@code next}, returns how many. */
    @FunctionalInterface
    interface Step {
        int run(int next) throws Exception;
    }

    /** What a warm-up or measurement saw: decisions per second of each window, in order. */
    record Result(List<Double> windows, boolean steady, long decisions, Duration took) {
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
     * Runs {@code step} from {@code threads} threads in windows of {@code window} until
     * throughput has {@linkplain #stoppedClimbing stopped climbing}, or {@code max} has passed
     * (then {@link Result#steady()} is false).
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
        boolean steady = false;
        try {
            long last = 0;
            long lastAt = start;
            while (windows.size() < maxWindows && !stop.get()) {
                Thread.sleep(window.toMillis());
                long now = System.nanoTime();
                long count = done.sum();
                windows.add((count - last) * 1e9 / (now - lastAt));
                last = count;
                lastAt = now;
                if (span > 0 && stoppedClimbing(windows, span)) {
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
            throw new IllegalStateException("a decision failed while loading from " + threads + " threads", failure.get());
        }
        return new Result(List.copyOf(windows), span > 0 ? steady : !(spread(windows) > TOLERANCE), done.sum(),
                Duration.ofNanos(System.nanoTime() - start));
    }
}
