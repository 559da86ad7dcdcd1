package dev.sluice.benchmarks;

import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * Waiting for a permit under contention (issue 25): many waiters on a rate that is the
 * bottleneck, so every one of them waits. Each {@link OutboundContender} runs from {@code waiters}
 * threads (or, for an async contender, as many chains of async acquires) that acquire one permit
 * after another for a warm-up and then a fixed measured time, against the same Redis, and every
 * grant's start is stamped. From the stamps:
 *
 * <ul>
 *   <li><b>achieved ÷ configured</b>: grants per second in the measured time over the configured
 *       rate; 1.00 when the limiter, not the machine, is the bottleneck.</li>
 *   <li><b>lateness against the ideal schedule</b>: with the backlog never empty, the k-th grant of
 *       a key in the measured time is due at {@code start + k / rate}; its actual start minus that
 *       (negative: early). The same yardstick for every contender, whether it promises a start or not.</li>
 *   <li><b>lateness against its own promise</b> (Sluice only, the only contender that says when a
 *       waiter will start): actual start minus (the instant it asked + the wait its
 *       {@code Decision} reserved). The store's slot lies between the ask and the answer, so this
 *       includes the round trip: an upper bound of the error.</li>
 *   <li><b>over-admission</b>: the most grants of one key in any 1 s, and how many grants made some
 *       1 s hold more than {@code rate + burst} (the most a token bucket, GCRA or sliding window of
 *       that rate and burst ever allows), on the starts as the provider would see them.</li>
 *   <li><b>Redis commands per acquire</b>: {@code INFO commandstats} before and after the measured
 *       time (this counts the commands inside scripts too), and the script calls alone (each one
 *       round trip), and Redis's own µs.</li>
 * </ul>
 *
 * <p>Not JMH: a waiting API's figure of merit is when each call starts, not how many calls a
 * thread completes per second; JMH's per-invocation timing would measure the waits it imposes,
 * and its iterations would cut the one continuous backlog the schedule is measured on.
 */
final class OutboundBenchmark {

    /** The configured rate of the whole run, permits per second, shared by the keys of a trial. */
    static final long RATE = 2_000;
    /** Every contender's burst: a small one, so that the rate, not the burst, decides. */
    static final long BURST = 2;
    /** The longest any waiter waits; a waiter refused within it is counted, not granted. */
    static final Duration MAX_WAIT = Duration.ofSeconds(5);

    private static final long SECOND = 1_000_000_000L;

    private OutboundBenchmark() {
    }

    /** How long {@link #BURST} permits take to come at {@code ratePerKey} per second. */
    static Duration burstPeriod(long ratePerKey) {
        return Duration.ofNanos(BURST * SECOND / ratePerKey);
    }

    /** Signed lateness in milliseconds (negative: early): p50, p99 and the latest. */
    record Lateness(double p50, double p99, double max) {
        static Lateness of(double[] millis) {
            if (millis.length == 0) {
                return null;
            }
            double[] sorted = millis.clone();
            Arrays.sort(sorted);
            return new Lateness(percentile(sorted, 0.50), percentile(sorted, 0.99), sorted[sorted.length - 1]);
        }

        private static double percentile(double[] sorted, double q) {
            int at = (int) Math.ceil(q * sorted.length) - 1;
            return sorted[Math.max(0, Math.min(sorted.length - 1, at))];
        }
    }

    /**
     * One trial's figures.
     *
     * @param grants          grants that started within the measured time
     * @param refused         acquires refused within {@link #MAX_WAIT} over the whole trial
     * @param failures        store failures the contender answered without Redis
     * @param achieved        grants per second in the measured time ÷ the configured rate
     * @param schedule        lateness against the ideal schedule
     * @param promise         lateness against the contender's own promise; null if it makes none
     * @param maxInSecond     the most grants of one key in any 1 s
     * @param overAdmitted    grants that made some 1 s of their key hold more than rate + burst
     * @param acquires        acquires completed (granted or refused) between the two commandstats
     * @param commands        commands Redis ran in that time, inside scripts included
     * @param scripts         script calls (EVAL, EVALSHA) in that time
     * @param redisMicros     Redis's own time for them, µs
     * @param byCommand       commands per acquire, the most frequent first
     */
    record Row(String contender, int keys, int waiters, double seconds, long grants, long refused, long failures,
               double achieved, Lateness schedule, Lateness promise, long maxInSecond, long overAdmitted,
               long acquires, long commands, long scripts, long redisMicros, String byCommand) {

        double commandsPerAcquire() {
            return acquires == 0 ? Double.NaN : commands / (double) acquires;
        }

        double scriptsPerAcquire() {
            return acquires == 0 ? Double.NaN : scripts / (double) acquires;
        }

        double redisMicrosPerAcquire() {
            return acquires == 0 ? Double.NaN : redisMicros / (double) acquires;
        }
    }

    /**
     * Every contender at every number of keys and waiters, one trial at a time. A trial that fails
     * is named to {@code warn} and left out, not fatal. Each contender first runs once unrecorded
     * (the smallest shape, {@code warm} and half a second): without it the first trial of the JVM
     * paid for compiling the code all contenders share (Redisson, Netty): on a loaded machine the
     * first, Sluice's token bucket at 16 waiters, reached 0.6 to 0.9 of the rate, GCRA after it 0.96.
     */
    static List<Row> measure(BenchRedis redis, List<String> contenders, int[] keyCounts, int[] waiters,
                             Duration warm, Duration measured, Consumer<String> warn) {
        for (String contender : contenders) {
            if (!Arrays.asList(OutboundContender.NAMES).contains(contender)) {
                throw new IllegalArgumentException("--outbound-contenders: unknown contender '" + contender
                        + "'; one of " + String.join(", ", OutboundContender.NAMES));
            }
        }
        for (String contender : contenders) {
            try {
                trial(redis, contender, 1, waiters[0], warm, Duration.ofMillis(500));
            } catch (RuntimeException e) {
                warn.accept("outbound " + contender + ": its unrecorded first run failed: " + e);
            }
        }
        List<Row> rows = new ArrayList<>();
        for (int keys : keyCounts) {
            for (int n : waiters) {
                for (String contender : contenders) {
                    if (!redis.ensureAlive()) {
                        warn.accept("Redis was down before outbound " + contender + " and was restarted");
                    }
                    try {
                        Row row = trial(redis, contender, keys, n, warm, measured);
                        System.out.println(line(row));
                        rows.add(row);
                    } catch (RuntimeException e) {
                        warn.accept("outbound " + contender + ", " + keys + " key(s), " + n + " waiters failed: " + e);
                    }
                }
            }
        }
        return rows;
    }

    /**
     * One contender from {@code waiters} waiters spread evenly over {@code keys} keys (waiter w on
     * key {@code w % keys}), each key at {@code RATE / keys} per second: the warm-up, then
     * {@code measured} of stamped grants, then the waiters finish the acquire they are in.
     */
    static Row trial(BenchRedis redis, String name, int keys, int waiters, Duration warm, Duration measured) {
        if (RATE % keys != 0 || waiters < keys) {
            throw new IllegalArgumentException("keys must divide " + RATE + " and be at most the waiters, got " + keys
                    + " keys for " + waiters + " waiters");
        }
        redis.flushIfOwned();
        long ratePerKey = RATE / keys;
        String[] names = new String[keys];
        String run = Long.toString(System.nanoTime(), 36);
        for (int k = 0; k < keys; k++) {
            names[k] = "provider-" + run + "-" + k;
        }
        RedissonClient client = redis.newClient();
        try (OutboundContender contender = OutboundContender.create(name, client, names, ratePerKey)) {
            Stamps[] stamps = new Stamps[waiters];
            for (int w = 0; w < waiters; w++) {
                stamps[w] = new Stamps(w % keys);
            }
            // One acquire first, outside the stamps: loads the script (no NOSCRIPT storm when all start at once).
            try {
                contender.acquire(0);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            Load load = contender.async() ? new AsyncLoad(contender, stamps) : new SyncLoad(contender, stamps);
            load.start();
            sleep(warm);
            long t0 = System.nanoTime();
            long doneBefore = load.done.sum();
            Map<String, long[]> before = commandStats(redis);
            sleep(measured);
            long t1 = System.nanoTime();
            load.stopAndWait();
            Map<String, long[]> after = commandStats(redis);
            long acquires = load.done.sum() - doneBefore;
            return row(name, keys, waiters, ratePerKey, t0, t1, stamps, load.refused.sum(), contender.failures(),
                    acquires, before, after);
        } finally {
            client.shutdown();
        }
    }

    /**
     * The figures of a trial from its stamps: the grants that started in {@code [t0, t1)} (nanoTime),
     * and the commandstats taken at {@code t0} and after the last acquire ended.
     */
    static Row row(String name, int keys, int waiters, long ratePerKey, long t0, long t1, Stamps[] stamps,
                   long refused, long failures, long acquires, Map<String, long[]> before,
                   Map<String, long[]> after) {
        List<List<Long>> byKey = new ArrayList<>();
        for (int k = 0; k < keys; k++) {
            byKey.add(new ArrayList<>());
        }
        List<Double> promise = new ArrayList<>();
        long grants = 0;
        for (Stamps s : stamps) {
            for (int i = 0; i < s.size; i++) {
                long start = s.start[i];
                if (start < t0 || start >= t1) {
                    continue;
                }
                grants++;
                byKey.get(s.key).add(start);
                if (s.promised[i] != OutboundContender.NO_PROMISE) {
                    promise.add((start - (s.ask[i] + s.promised[i])) / 1e6);
                }
            }
        }
        double interval = SECOND / (double) ratePerKey;
        List<Double> schedule = new ArrayList<>();
        long maxInSecond = 0;
        long overAdmitted = 0;
        int allowed = (int) (ratePerKey + BURST);
        for (List<Long> list : byKey) {
            long[] starts = list.stream().mapToLong(Long::longValue).sorted().toArray();
            for (int k = 0; k < starts.length; k++) {
                schedule.add((starts[k] - (t0 + k * interval)) / 1e6);
                if (k >= allowed && starts[k] - starts[k - allowed] < SECOND) {
                    overAdmitted++;
                }
            }
            for (int from = 0, to = 0; to < starts.length; to++) {
                while (starts[to] - starts[from] >= SECOND) {
                    from++;
                }
                maxInSecond = Math.max(maxInSecond, to - from + 1);
            }
        }
        double seconds = (t1 - t0) / 1e9;
        long commands = 0;
        long scripts = 0;
        long micros = 0;
        Map<String, Long> delta = new TreeMap<>();
        for (Map.Entry<String, long[]> e : after.entrySet()) {
            long[] was = before.getOrDefault(e.getKey(), new long[2]);
            long calls = e.getValue()[0] - was[0];
            if (calls > 0) {
                delta.put(e.getKey(), calls);
                commands += calls;
                micros += e.getValue()[1] - was[1];
                if (e.getKey().startsWith("eval") || e.getKey().equals("fcall")) { // decide.lua is an FCALL on Redis 7
                    scripts += calls;
                }
            }
        }
        StringBuilder byCommand = new StringBuilder();
        delta.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())).limit(5)
                .forEach(e -> byCommand.append(byCommand.length() == 0 ? "" : ", ").append(e.getKey()).append(' ')
                        .append(acquires == 0 ? "–"
                                : String.format(Locale.ROOT, "%.2f", e.getValue() / (double) acquires)));
        return new Row(name, keys, waiters, seconds, grants, refused, failures, grants / seconds / (ratePerKey * keys),
                Lateness.of(toArray(schedule)), Lateness.of(toArray(promise)), maxInSecond, overAdmitted,
                acquires, commands, scripts, micros, byCommand.toString());
    }

    private static double[] toArray(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** Calls and µs per command from INFO commandstats, without the measuring commands and keep-alives. */
    private static Map<String, long[]> commandStats(BenchRedis redis) {
        Map<String, long[]> stats = new TreeMap<>();
        Footprint.info(redis, "commandstats").forEach((name, value) -> {
            String command = name.replace("cmdstat_", "");
            if (command.equals("info") || command.equals("ping") || command.equals("flushall")) {
                return;
            }
            long calls = 0;
            long usec = 0;
            for (String field : value.split(",")) {
                if (field.startsWith("calls=")) {
                    calls = Long.parseLong(field.substring(6));
                } else if (field.startsWith("usec=")) {
                    usec = Long.parseLong(field.substring(5));
                }
            }
            stats.put(command, new long[] {calls, usec});
        });
        return stats;
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** One waiter's grants: when it asked, when it started, what it was promised. Written by that waiter alone. */
    static final class Stamps {
        final int key;
        long[] ask = new long[1024];
        long[] start = new long[1024];
        long[] promised = new long[1024];
        int size;

        Stamps(int key) {
            this.key = key;
        }

        void add(long asked, long started, long promise) {
            if (size == start.length) {
                ask = Arrays.copyOf(ask, size * 2);
                start = Arrays.copyOf(start, size * 2);
                promised = Arrays.copyOf(promised, size * 2);
            }
            ask[size] = asked;
            start[size] = started;
            promised[size] = promise;
            size++;
        }
    }

    /** The waiters of one trial. */
    abstract static class Load {
        final OutboundContender contender;
        final Stamps[] stamps;
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final LongAdder done = new LongAdder();
        final LongAdder refused = new LongAdder();

        Load(OutboundContender contender, Stamps[] stamps) {
            this.contender = contender;
            this.stamps = stamps;
        }

        abstract void start();

        /** Stops asking, waits for every acquire in progress, and fails if any failed otherwise than by refusal. */
        final void stopAndWait() {
            stop.set(true);
            try {
                if (!awaitAll(MAX_WAIT.multipliedBy(6))) {
                    throw new IllegalStateException(contender.getClass().getSimpleName() + ": waiters still busy "
                            + MAX_WAIT.multipliedBy(6).toSeconds() + " s after the end");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            if (failure.get() != null) {
                throw new IllegalStateException("an acquire failed", failure.get());
            }
        }

        abstract boolean awaitAll(Duration max) throws InterruptedException;

        /** Records one acquire's end; false if it failed otherwise than by refusal. */
        final boolean finished(Stamps s, long asked, Long promised, Throwable error) {
            long started = System.nanoTime();
            done.increment();
            if (error == null) {
                s.add(asked, started, promised);
                return true;
            }
            Throwable cause = error.getCause() != null && !(error instanceof OutboundContender.Refused)
                    ? error.getCause() : error;
            if (cause instanceof OutboundContender.Refused) {
                refused.increment();
                return true;
            }
            failure.compareAndSet(null, cause);
            stop.set(true);
            return false;
        }
    }

    /** One platform thread per waiter, each blocking in {@code acquire}. */
    static final class SyncLoad extends Load {
        private final List<Thread> threads = new ArrayList<>();

        SyncLoad(OutboundContender contender, Stamps[] stamps) {
            super(contender, stamps);
        }

        @Override
        void start() {
            for (int w = 0; w < stamps.length; w++) {
                Stamps s = stamps[w];
                Thread thread = new Thread(() -> {
                    while (!stop.get()) {
                        long asked = System.nanoTime();
                        long promised;
                        try {
                            promised = contender.acquire(s.key);
                        } catch (Throwable e) {
                            if (!finished(s, asked, null, e)) {
                                return;
                            }
                            continue;
                        }
                        finished(s, asked, promised, null);
                    }
                }, "outbound-waiter-" + w);
                thread.setDaemon(true);
                threads.add(thread);
            }
            threads.forEach(Thread::start);
        }

        @Override
        boolean awaitAll(Duration max) throws InterruptedException {
            long deadline = System.nanoTime() + max.toNanos();
            for (Thread thread : threads) {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                if (thread.isAlive()) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * One chain of async acquires per waiter: the next is asked when the last completes, on the
     * thread that completed it; no thread waits.
     */
    static final class AsyncLoad extends Load {
        private final CountDownLatch ended;

        AsyncLoad(OutboundContender contender, Stamps[] stamps) {
            super(contender, stamps);
            this.ended = new CountDownLatch(stamps.length);
        }

        @Override
        void start() {
            for (Stamps s : stamps) {
                next(s);
            }
        }

        private void next(Stamps s) {
            if (stop.get()) {
                ended.countDown();
                return;
            }
            long asked = System.nanoTime();
            CompletableFuture<Long> acquired;
            try {
                acquired = contender.acquireAsync(s.key);
            } catch (Throwable e) {
                finished(s, asked, null, e);
                ended.countDown();
                return;
            }
            acquired.whenComplete((promised, error) -> {
                if (finished(s, asked, promised, error)) {
                    next(s);
                } else {
                    ended.countDown();
                }
            });
        }

        @Override
        boolean awaitAll(Duration max) throws InterruptedException {
            return ended.await(max.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** One row as a progress line. */
    static String line(Row row) {
        return String.format(Locale.ROOT, "outbound: %s, %d key(s), %d waiters: %,d grants in %.1f s, achieved %.2f of "
                        + "%,d/s, lateness vs schedule p50 %s / p99 %s / max %s ms, vs promise %s, max in 1 s %d, "
                        + "over-admitted %d, refused %d, %.2f commands per acquire",
                row.contender(), row.keys(), row.waiters(), row.grants(), row.seconds(), row.achieved(), RATE,
                ms(row.schedule(), Lateness::p50), ms(row.schedule(), Lateness::p99),
                ms(row.schedule(), Lateness::max),
                row.promise() == null ? "–" : ms(row.promise(), Lateness::p50) + " / "
                        + ms(row.promise(), Lateness::p99) + " / " + ms(row.promise(), Lateness::max) + " ms",
                row.maxInSecond(), row.overAdmitted(), row.refused(), row.commandsPerAcquire());
    }

    private static String ms(Lateness lateness, java.util.function.ToDoubleFunction<Lateness> part) {
        if (lateness == null) {
            return "–";
        }
        double v = part.applyAsDouble(lateness);
        return Math.abs(v) >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    /** The report's section: the tables and what to read them with. */
    static String table(List<Row> rows) {
        StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "Every waiter acquires one permit after another; the rate, %,d per second "
                + "in all (split evenly over the keys), burst %d per key, is the bottleneck, so every acquire waits. "
                + "Fixed-duration driver, not JMH; lateness in ms, negative is early. The ideal schedule: the k-th "
                + "grant of a key in the measured time at start + k / rate. Over the limit: grants that made some 1 s "
                + "of their key hold more than rate + burst. Commands: INFO commandstats over the measured time "
                + "(inside scripts included) ÷ acquires completed.%n%n", RATE, BURST));
        md.append("| contender | keys | waiters | achieved ÷ configured "
                + "| lateness vs ideal schedule p50 / p99 / max | vs own promise p50 / p99 / max "
                + "| most grants of a key in 1 s | grants over the limit | refused | commands per acquire "
                + "| script calls per acquire | Redis µs per acquire | by command, per acquire |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Row row : rows) {
            md.append(String.format(Locale.ROOT,
                    "| %s | %d | %d | %.2f | %s / %s / %s | %s | %,d | %,d | %,d | %.2f | %.2f | %.1f | %s |%n",
                    row.contender(), row.keys(), row.waiters(), row.achieved(),
                    ms(row.schedule(), Lateness::p50), ms(row.schedule(), Lateness::p99),
                    ms(row.schedule(), Lateness::max),
                    row.promise() == null ? "– (promises none)" : ms(row.promise(), Lateness::p50) + " / "
                            + ms(row.promise(), Lateness::p99) + " / " + ms(row.promise(), Lateness::max),
                    row.maxInSecond(), row.overAdmitted(), row.refused(), row.commandsPerAcquire(),
                    row.scriptsPerAcquire(), row.redisMicrosPerAcquire(), row.byCommand()));
        }
        for (Row row : rows) {
            if (row.failures() > 0) {
                md.append("\nWARNING: ").append(row.contender()).append(" at ").append(row.waiters())
                        .append(" waiters had ").append(row.failures())
                        .append(" store failures; its grants include fail-open ones.\n");
            }
        }
        md.append('\n');
        return md.toString();
    }
}
