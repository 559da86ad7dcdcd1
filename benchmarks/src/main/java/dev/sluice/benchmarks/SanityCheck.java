package dev.sluice.benchmarks;

import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Is the floor a floor? Issue 26 found the harness's one-{@code EVALSHA} floor at 4.4k decisions/s
 * where a plain {@code RScript.evalSha} loop reached 22k and {@code redis-benchmark}'s own
 * {@code EVALSHA} 51k: every ratio above the floor was inflated. This check measures, against the
 * same Redis and at the same concurrency as the run's floor, the same script two other ways:
 *
 * <ul>
 *   <li>a <b>plain loop</b>: threads calling {@code RScript.evalSha} on a client of the same
 *       settings, written here without {@link FloorTokenBucket} or JMH, warmed until steady;</li>
 *   <li>{@code redis-benchmark} (Debian: {@code apt-get install redis-tools}) with as many
 *       connections as threads, over 100,000 random keys.</li>
 * </ul>
 *
 * The floor should equal the plain loop, and come within {@link #FACTOR} of redis-benchmark, or
 * the report says the run is not trustworthy.
 */
final class SanityCheck {

    /**
     * How many times slower than redis-benchmark a correct floor may be. redis-benchmark is a C
     * client on one event loop that spends a few µs of CPU per request; Redisson spends tens (the
     * issue measured 56 µs of client CPU per floor decision against 31 µs of Redis's): Netty's
     * pipeline, the codec, a future per call and a thread woken per answer. With client and Redis
     * sharing two cores, as on loopback here, that bounds the floor near 2 cores ÷ (56 + 31) µs,
     * about 23k/s, against redis-benchmark's one Redis core ÷ 31 µs plus its own little CPU, some
     * 30–50k/s: 1.5 to 2.5x apart. 3 leaves room for noise; the broken floor was 11.7x apart.
     * With the client on cores of its own the gap narrows, so the factor stays an upper bound.
     */
    static final double FACTOR = 3.0;

    /** Keys of the plain loop and of redis-benchmark, as many as the Redis benchmark's many-callers shape. */
    static final int KEYS = 100_000;

    private static final String RATE = Double.toString((double) RedisContender.RATE);
    private static final String CAPACITY = Long.toString(RedisContender.RATE);
    private static final String TTL_MILLIS = "1000";

    /** A rate, or NaN with the reason in {@code note}. */
    record Measured(double perSecond, String note) {
    }

    /** The two measurements at one thread count. */
    record Row(int threads, Measured plainLoop, Measured redisBenchmark) {
    }

    private SanityCheck() {
    }

    /** Measures the plain loop and redis-benchmark at each of {@code threads}. */
    static List<Row> measure(BenchRedis redis, int[] threads, Duration steadyMax) {
        List<Row> rows = new ArrayList<>();
        for (int t : threads) {
            Measured plain = plainLoop(redis, t, steadyMax);
            Measured bench = redisBenchmark(redis, t, 0);
            System.out.printf(Locale.ROOT, "sanity check, %d threads: plain evalSha loop %s; redis-benchmark EVALSHA %s%n",
                    t, describe(plain), describe(bench));
            rows.add(new Row(t, plain, bench));
        }
        return rows;
    }

    /**
     * "trustworthy" or "NOT trustworthy", with how many times redis-benchmark outran the floor
     * and the factor allowed.
     */
    static String verdict(double floor, double redisBenchmark) {
        double times = redisBenchmark / floor;
        return String.format(Locale.ROOT, "%s: redis-benchmark %.1fx the floor (floor within factor %.0f: %s)",
                times <= FACTOR ? "trustworthy" : "NOT trustworthy", times, FACTOR, times <= FACTOR ? "yes" : "no");
    }

    /**
     * The plain way: {@code threads} threads in a loop of {@code RScript.evalSha} of the floor's
     * script, on a client with the run's settings, warmed until steady, then three 1 s windows;
     * the median.
     */
    static Measured plainLoop(BenchRedis redis, int threads, Duration steadyMax) {
        redis.flushIfOwned();
        RedissonClient client = redis.newClient();
        try {
            RScript script = client.getScript(StringCodec.INSTANCE);
            String sha = script.scriptLoad(FloorTokenBucket.SCRIPT);
            String[] keys = new String[KEYS];
            for (int i = 0; i < KEYS; i++) {
                keys[i] = "plain:caller-" + i;
            }
            SteadyLoad.Step step = next -> {
                String key = keys[next % KEYS];
                Long allowed = script.evalSha(key, RScript.Mode.READ_WRITE, sha, RScript.ReturnType.LONG,
                        List.of(key), RATE, CAPACITY, TTL_MILLIS);
                if (allowed != 1L) {
                    throw new IllegalStateException("the floor script refused " + key + " under a limit that never runs out");
                }
                return 1;
            };
            SteadyLoad.Result warm = SteadyLoad.warm(threads, Duration.ofMillis(500), steadyMax, step);
            SteadyLoad.Result measured = SteadyLoad.measure(threads, Duration.ofSeconds(1), 3, step);
            return new Measured(SteadyLoad.median(measured.windows()), String.format(Locale.ROOT,
                    "warm-up %.1f s (%s), then 1 s windows %s", warm.took().toNanos() / 1e9,
                    warm.steady() ? "stopped climbing" : "STILL CLIMBING", rates(measured.windows())));
        } finally {
            client.shutdown();
        }
    }

    /**
     * redis-benchmark's {@code EVALSHA} of the floor's script with {@code threads} connections over
     * {@link #KEYS} random keys: a first run to warm and size, then three runs of about 1.5 s; the
     * median. {@code requests} above 0 instead makes one run of that many (for the smoke test).
     */
    static Measured redisBenchmark(BenchRedis redis, int threads, int requests) {
        if (!redisBenchmarkInstalled()) {
            return new Measured(Double.NaN, "redis-benchmark is not installed (Debian/Ubuntu: apt-get install redis-tools): check not run");
        }
        URI uri = URI.create(redis.url());
        if (uri.getUserInfo() != null) {
            // A password would have to go on redis-benchmark's command line, visible to every process.
            return new Measured(Double.NaN, "the Redis URL carries credentials, which are not passed to redis-benchmark: check not run");
        }
        redis.flushIfOwned();
        String sha = redis.command("SCRIPT", "LOAD", FloorTokenBucket.SCRIPT).trim();
        String host = uri.getHost();
        int port = uri.getPort() < 0 ? 6379 : uri.getPort();
        try {
            if (requests > 0) {
                return new Measured(run(host, port, threads, requests, sha), requests + " requests");
            }
            double estimate = run(host, port, threads, 2_000, sha);
            int n = (int) Math.min(2_000_000, Math.max(2_000, estimate * 1.5));
            List<Double> rates = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                rates.add(run(host, port, threads, n, sha));
            }
            return new Measured(SteadyLoad.median(rates), String.format(Locale.ROOT, "3 runs of %,d requests: %s", n, rates(rates)));
        } catch (IOException | RuntimeException e) {
            return new Measured(Double.NaN, "redis-benchmark failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Measured(Double.NaN, "interrupted");
        }
    }

    /** Whether {@code redis-benchmark} runs. */
    static boolean redisBenchmarkInstalled() {
        try {
            Process process = new ProcessBuilder("redis-benchmark", "--version").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor(10, TimeUnit.SECONDS) && process.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static double run(String host, int port, int threads, int requests, String sha) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("redis-benchmark", "-h", host, "-p", Integer.toString(port),
                "-c", Integer.toString(threads), "-n", Integer.toString(requests), "-r", Integer.toString(KEYS), "--csv",
                "EVALSHA", sha, "1", "rb:caller-__rand_int__", RATE, CAPACITY, TTL_MILLIS)
                .redirectErrorStream(true).start();
        String output;
        try (InputStream in = process.getInputStream()) {
            output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IllegalStateException("redis-benchmark ran over 120 s");
        }
        if (process.exitValue() != 0 || output.contains("ERR") || output.contains("NOSCRIPT")) {
            throw new IllegalStateException("exit " + process.exitValue() + ": " + output.strip());
        }
        return requestsPerSecond(output);
    }

    /** The requests per second of redis-benchmark's {@code --csv} answer: the second field of its last line. */
    static double requestsPerSecond(String csv) {
        String[] lines = csv.strip().split("\\R");
        for (int i = lines.length - 1; i >= 0; i--) {
            String[] fields = lines[i].split("\",\"");
            if (fields.length >= 2) {
                try {
                    return Double.parseDouble(fields[1].replace("\"", ""));
                } catch (NumberFormatException headerOrNoise) {
                    // the header line, or a progress line: keep looking
                }
            }
        }
        throw new IllegalStateException("no requests per second in redis-benchmark's answer: " + csv.strip());
    }

    private static String describe(Measured measured) {
        return Double.isNaN(measured.perSecond()) ? measured.note()
                : String.format(Locale.ROOT, "%,.0f/s (%s)", measured.perSecond(), measured.note());
    }

    static String rates(List<Double> rates) {
        StringBuilder out = new StringBuilder();
        for (double rate : rates) {
            out.append(out.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%,.0f", rate));
        }
        return out.toString();
    }
}
