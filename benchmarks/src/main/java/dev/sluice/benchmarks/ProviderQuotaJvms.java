package dev.sluice.benchmarks;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.RateLimitedHttpClient;
import dev.sluice.redis.RedisStore;
import io.github.bucket4j.BlockingStrategy;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.redis.redisson.Bucket4jRedisson;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A strict provider's quota shared by three application JVMs, eight threads each: the scenario in
 * which a waiter whose JVM pauses comes back late while the other JVMs' waiters go on. Each JVM
 * calls the provider at most {@link #SHARED} (9 per second, burst 1) through one Redis, waiting at
 * most {@link #MAX_WAIT} for a permit; the provider, on loopback in this JVM, allows at most
 * {@link ProviderQuota#PROVIDER_PER_SECOND} calls in any 1000 ms and answers 429 beyond.
 * Contenders: {@code sluice} ({@link RateLimitedHttpClient} over {@link Permits}, token bucket on
 * {@code RedisStore}) and {@code bucket4j} (its blocking {@code tryConsume(1, maxWait, PARKING)}
 * on its Redisson proxy manager, then the same {@code HttpClient}), alternated in rounds.
 *
 * <p>Each contender runs with its JVMs undisturbed, then with one of them paused in turn
 * ({@link Pauses}). The figures: calls accepted per second in the measured time ÷ the provider's
 * quota, the 429s (calls bunched on the way), and the calls that got no permit within the wait (a
 * waiter that lost its place in line fails here). The machine's load average is reported beside
 * them: the scenario is meant to be run loaded too. Pauses are {@code kill -STOP}/{@code -CONT}:
 * Linux and macOS.
 */
final class ProviderQuotaJvms {

    /** 9 per second, burst 1: ten slots in any second of the provider, eleven span 1111 ms. */
    static final Limit SHARED = Limit.of("provider", 9, Duration.ofSeconds(1)).withBurst(1);
    static final Duration MAX_WAIT = Duration.ofSeconds(10);
    static final int JVMS = 3;
    static final int THREADS_PER_JVM = 8;
    static final List<String> CONTENDERS = List.of("sluice", "bucket4j");

    /** How long a JVM is paused, in trials with pauses: longer than the 111 ms a late call may take at 9/s. */
    static final Duration PAUSE = Duration.ofMillis(300);
    /** How often one of the JVMs is paused, in turn. */
    static final Duration PAUSE_EVERY = Duration.ofSeconds(2);

    private static final String READY = "ready";
    private static final String DONE = "done";
    private static final Duration START_UP = Duration.ofSeconds(60);

    private ProviderQuotaJvms() {
    }

    /**
     * One trial of one contender.
     *
     * @param paused      whether its JVMs were paused in turn ({@link #PAUSE} every {@link #PAUSE_EVERY})
     * @param noPermit    calls that got no permit within {@link #MAX_WAIT}, over the trial
     * @param errors      calls that failed otherwise (an I/O error), over the trial
     * @param loadAverage the machine's one-minute load average at the trial's end
     * @param problem     why the trial has no figures ({@code null}: it has)
     */
    record Row(String contender, boolean paused, double seconds, long accepted, long tooMany, long noPermit,
               long errors, double loadAverage, String problem) {
        /** Accepted calls per second ÷ the provider's quota. */
        double share() {
            return accepted / seconds / ProviderQuota.PROVIDER_PER_SECOND;
        }
    }

    /**
     * {@code rounds} rounds of every contender in turn, its JVMs running on undisturbed, then paused
     * in turn: {@code warm}, then {@code measured} counted.
     */
    static List<Row> measure(BenchRedis redis, int rounds, Duration warm, Duration measured, Consumer<String> warn) {
        List<Row> rows = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            for (boolean paused : new boolean[] {false, true}) {
                for (String contender : CONTENDERS) {
                    Row row = trial(redis, contender, paused, warm, measured);
                    if (row.problem() != null) {
                        warn.accept("outbound, three JVMs, " + contender + ": " + row.problem());
                    }
                    System.out.println(line(row));
                    rows.add(row);
                }
            }
        }
        return rows;
    }

    private static Row trial(BenchRedis redis, String contender, boolean paused, Duration warm, Duration measured) {
        redis.flushIfOwned();
        List<Process> processes = new ArrayList<>();
        Pauses pauses = null;
        try (ProviderQuota.Provider provider = new ProviderQuota.Provider()) {
            String key = "jvms-" + Long.toString(System.nanoTime(), 36);
            List<BlockingQueue<String>> outputs = new ArrayList<>();
            for (int i = 0; i < JVMS; i++) {
                Process process = start(redis, contender, key, provider.uri());
                processes.add(process);
                outputs.add(lines(process));
            }
            for (BlockingQueue<String> output : outputs) {
                String line = output.poll(START_UP.toSeconds(), TimeUnit.SECONDS);
                if (!READY.equals(line)) {
                    return failed(contender, paused, measured, "an instance was not ready within "
                            + START_UP.toSeconds() + " s: " + line);
                }
            }
            long start = System.nanoTime();
            long from = start + warm.toNanos();
            provider.countBetween(from, from + measured.toNanos());
            for (Process process : processes) {
                OutputStream in = process.getOutputStream();
                in.write(("go " + warm.plus(measured).toMillis() + "\n").getBytes(StandardCharsets.US_ASCII));
                in.flush();
            }
            if (paused) {
                pauses = new Pauses(processes, start + warm.plus(measured).toNanos());
                pauses.start();
            }
            long noPermit = 0;
            long errors = 0;
            long waitSeconds = warm.plus(measured).plus(MAX_WAIT).toSeconds() + 30;
            for (BlockingQueue<String> output : outputs) {
                String line = output.poll(waitSeconds, TimeUnit.SECONDS);
                if (line == null || !line.startsWith(DONE + " ")) {
                    return failed(contender, paused, measured, "an instance did not finish: " + line);
                }
                String[] counts = line.split(" ");
                noPermit += Long.parseLong(counts[1]);
                errors += Long.parseLong(counts[2]);
            }
            String pauseProblem = pauses == null ? null : pauses.end();
            if (pauseProblem != null) {
                return failed(contender, paused, measured, pauseProblem);
            }
            double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
            return new Row(contender, paused, measured.toNanos() / 1e9, provider.accepted.get(), provider.tooMany.get(),
                    noPermit, errors, load, null);
        } catch (IOException e) {
            return failed(contender, paused, measured, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return failed(contender, paused, measured, "interrupted");
        } finally {
            if (pauses != null) {
                pauses.end(); // none is left stopped
            }
            for (Process process : processes) {
                try {
                    if (!process.waitFor(10, TimeUnit.SECONDS)) {
                        process.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    process.destroyForcibly();
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Pauses the instances' JVMs in turn, as a garbage collection or a starved CPU would: every
     * {@link #PAUSE_EVERY} one of them is stopped ({@code SIGSTOP}) for {@link #PAUSE}, then
     * continued, until {@code untilNanos}. Its waiters whose slots pass meanwhile come back late
     * while the other JVMs' go on.
     */
    private static final class Pauses extends Thread {
        private final List<Process> processes;
        private final long untilNanos;
        private volatile String problem;

        Pauses(List<Process> processes, long untilNanos) {
            super("provider-quota-jvm-pauses");
            setDaemon(true);
            this.processes = processes;
            this.untilNanos = untilNanos;
        }

        @Override
        public void run() {
            try {
                for (int next = 0; System.nanoTime() - untilNanos < 0; next = (next + 1) % processes.size()) {
                    Thread.sleep(PAUSE_EVERY.minus(PAUSE).toMillis());
                    Process process = processes.get(next);
                    signal(process, "STOP");
                    try {
                        Thread.sleep(PAUSE.toMillis());
                    } finally {
                        signal(process, "CONT");
                    }
                }
            } catch (InterruptedException e) {
                // stopped: the trial is over
            }
        }

        /** Ends the pauses, continues every JVM, and says why a pause failed ({@code null}: none did). */
        String end() {
            interrupt();
            try {
                join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            processes.forEach(process -> signal(process, "CONT"));
            return problem;
        }

        private void signal(Process process, String signal) {
            try {
                Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid()))
                        .redirectErrorStream(true).start();
                kill.getInputStream().readAllBytes();
                if (kill.waitFor() != 0 && process.isAlive()) {
                    problem = "kill -" + signal + " failed";
                }
            } catch (IOException e) {
                problem = "kill -" + signal + " could not run: " + e.getMessage();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Row failed(String contender, boolean paused, Duration measured, String problem) {
        return new Row(contender, paused, measured.toNanos() / 1e9, 0, 0, 0, 0, Double.NaN, problem);
    }

    /** A new JVM running {@link #main}: this JVM's {@code java}, its arguments and class path, the run's Redis. */
    private static Process start(BenchRedis redis, String contender, String key, URI provider) throws IOException {
        List<String> command = redis.newJvm(ProviderQuotaJvms.class, contender, key, provider.toString());
        // its log (Redisson's warnings) is not read: discarded, so a full pipe cannot stall it
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    }

    /** The lines {@code process} prints, read by a daemon thread of their own. */
    private static BlockingQueue<String> lines(Process process) {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    lines.add(line.trim());
                }
            } catch (IOException e) {
                lines.add("its output could not be read: " + e);
            }
        }, "provider-quota-jvm-output");
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    /**
     * One instance, in a JVM of its own: {@code contender key providerUri}. Prints {@value #READY}
     * once it can decide and its first call to Redis and to the provider are behind it (a first
     * call pays for connections and class loading, which on a busy machine can take the whole of
     * a short trial), waits for {@code go <millis>} on its standard input, calls the provider
     * from {@link #THREADS_PER_JVM} threads, one call at a time each, for that long, and prints
     * {@code done <noPermit> <errors>}.
     */
    public static void main(String[] args) throws Exception {
        String contender = args[0];
        String key = args[1];
        URI provider = URI.create(args[2]);
        HttpRequest request = HttpRequest.newBuilder(provider).build();
        RedissonClient client = BenchRedis.get().newClient();
        try {
            HttpClient http = HttpClient.newHttpClient();
            Caller caller = caller(contender, client, key, http);
            http.send(HttpRequest.newBuilder(ProviderQuota.Provider.warmUri(provider)).build(),
                    HttpResponse.BodyHandlers.discarding());
            System.out.println(READY);
            System.out.flush();
            String go = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII)).readLine();
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(go.split(" ")[1]));
            AtomicLong noPermit = new AtomicLong();
            AtomicLong errors = new AtomicLong();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS_PER_JVM; t++) {
                Thread thread = new Thread(() -> {
                    while (System.nanoTime() - end < 0) {
                        try {
                            caller.call(request);
                        } catch (PermitUnavailableException | NoPermit e) {
                            noPermit.incrementAndGet();
                        } catch (InterruptedException e) {
                            return;
                        } catch (IOException | RuntimeException e) {
                            errors.incrementAndGet();
                        }
                    }
                }, "caller-" + t);
                threads.add(thread);
                thread.start();
            }
            for (Thread thread : threads) {
                thread.join();
            }
            System.out.println(DONE + " " + noPermit.get() + " " + errors.get());
            System.out.flush();
        } finally {
            client.shutdown();
        }
        System.exit(0);
    }

    /** One call to the provider, after a permit; {@link PermitUnavailableException} when none came in time. */
    private interface Caller {
        void call(HttpRequest request) throws IOException, InterruptedException;
    }

    private static Caller caller(String contender, RedissonClient client, String key, HttpClient http)
            throws InterruptedException {
        switch (contender) {
            case "sluice" -> {
                RateLimiter limiter = RateLimiter.builder().limit(SHARED).store(RedisStore.of(client))
                        .timeout(Duration.ofSeconds(2)).build();
                // its first decision waits for the store: a call failing open would not be limited
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (limiter.decide("ready").storeFailed() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                RateLimitedHttpClient limited = RateLimitedHttpClient.wrap(http, Permits.of(limiter, MAX_WAIT), key);
                return request -> limited.send(request, HttpResponse.BodyHandlers.discarding());
            }
            case "bucket4j" -> {
                BucketConfiguration configuration = BucketConfiguration.builder()
                        .addLimit(limit -> limit.capacity(1).refillGreedy(9, Duration.ofSeconds(1))).build();
                BucketProxy bucket = Bucket4jRedisson.casBasedBuilder(((Redisson) client).getCommandExecutor())
                        .expirationAfterWrite(ExpirationAfterWriteStrategy
                                .basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                        .build().builder().build("b4j-jvms:" + key, () -> configuration);
                bucket.getAvailableTokens(); // its first round trip, which takes no token
                return request -> {
                    if (!bucket.asBlocking().tryConsume(1, MAX_WAIT, BlockingStrategy.PARKING)) {
                        throw new NoPermit();
                    }
                    http.send(request, HttpResponse.BodyHandlers.discarding());
                };
            }
            default -> throw new IllegalArgumentException("unknown contender '" + contender + "'; one of "
                    + CONTENDERS);
        }
    }

    /** Bucket4j's "no token within the wait", counted as Sluice's {@link PermitUnavailableException} is. */
    private static final class NoPermit extends RuntimeException {
        NoPermit() {
            super("no token within " + MAX_WAIT, null, false, false);
        }
    }

    private static String pauses(Row row) {
        return row.paused() ? "yes" : "no";
    }

    /** The trial as a progress line. */
    static String line(Row row) {
        if (row.problem() != null) {
            return "outbound, three JVMs, " + row.contender() + ": no figures, " + row.problem();
        }
        return String.format(Locale.ROOT, "outbound, three JVMs x %d threads%s, %s: %d accepted in %.1f s, %.2f of "
                        + "the provider's %d/s, %d 429s, %d without a permit within %d s, %d failed, load %.1f",
                THREADS_PER_JVM, row.paused() ? " paused in turn" : "", row.contender(), row.accepted(), row.seconds(),
                row.share(), ProviderQuota.PROVIDER_PER_SECOND, row.tooMany(), row.noPermit(), MAX_WAIT.toSeconds(),
                row.errors(), row.loadAverage());
    }

    /**
     * Sluice's median accepted count over the rounds with or without pauses ÷ Bucket4j's;
     * {@code null} without figures of both.
     */
    static Double sluiceToBucket4j(List<Row> rows, boolean paused) {
        double sluice = median(rows, "sluice", paused);
        double bucket4j = median(rows, "bucket4j", paused);
        return Double.isNaN(sluice) || Double.isNaN(bucket4j) || bucket4j == 0 ? null : sluice / bucket4j;
    }

    /** Sluice's calls without a permit within the wait over its rounds; {@code null} without figures. */
    static Long sluiceWithoutPermit(List<Row> rows) {
        List<Row> sluice = rows.stream().filter(row -> row.contender().equals("sluice") && row.problem() == null)
                .toList();
        return sluice.isEmpty() ? null : sluice.stream().mapToLong(Row::noPermit).sum();
    }

    private static double median(List<Row> rows, String contender, boolean paused) {
        double[] accepted = rows.stream().filter(row -> row.contender().equals(contender) && row.paused() == paused
                && row.problem() == null).mapToDouble(Row::accepted).sorted().toArray();
        if (accepted.length == 0) {
            return Double.NaN;
        }
        int middle = accepted.length / 2;
        return accepted.length % 2 == 1 ? accepted[middle] : (accepted[middle - 1] + accepted[middle]) / 2;
    }

    /** The report's lines: the scenario and a row per trial, in the order run. */
    static String table(List<Row> rows) {
        StringBuilder md = new StringBuilder(String.format(Locale.ROOT, "Three JVMs, %d threads each, one call at a "
                        + "time, share 9/s (burst 1) through Redis in front of a provider on loopback that allows %d "
                        + "calls in any 1000 ms and answers 429 beyond; a permit waited for at most %d s. `sluice`: "
                        + "`RateLimitedHttpClient` over `Permits` (token bucket); `bucket4j`: its blocking "
                        + "`tryConsume(1, maxWait, PARKING)` on its Redisson proxy manager, then the same "
                        + "`HttpClient`. The most the limit lets through is 0.90 of the provider's quota. With JVM "
                        + "pauses, one of the three JVMs is stopped (`SIGSTOP`) for %d ms every %d s, in turn, as a "
                        + "garbage collection or a starved CPU would stop it: its waiters come back late while the "
                        + "others go on.%n%n"
                        + "| contender | JVM pauses | accepted ÷ the provider's quota | calls answered 429 "
                        + "| without a permit | failed otherwise | load average at the end |%n"
                        + "|---|---|---:|---:|---:|---:|---:|%n",
                THREADS_PER_JVM, ProviderQuota.PROVIDER_PER_SECOND, MAX_WAIT.toSeconds(), PAUSE.toMillis(),
                PAUSE_EVERY.toSeconds()));
        for (Row row : rows) {
            if (row.problem() != null) {
                md.append("| ").append(row.contender()).append(" | ").append(pauses(row)).append(" | no figures: ")
                        .append(row.problem()).append(" | | | | |\n");
            } else {
                md.append(String.format(Locale.ROOT, "| %s | %s | %.2f | %,d | %,d | %,d | %.1f |%n", row.contender(),
                        pauses(row), row.share(), row.tooMany(), row.noPermit(), row.errors(), row.loadAverage()));
            }
        }
        return md.append('\n').toString();
    }
}
