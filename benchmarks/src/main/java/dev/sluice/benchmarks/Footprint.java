package dev.sluice.benchmarks;

import org.redisson.api.RedissonClient;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * What one decision costs Redis, per contender, counted rather than timed (so not JMH):
 *
 * <ul>
 *   <li><b>bytes per key</b>: {@code MEMORY USAGE key SAMPLES 0} after one decision on a fresh key
 *       and after 100 decisions on one key (a sliding log grows with admissions), and the growth of
 *       {@code used_memory} over {@value #KEYS} fresh keys divided by their number, which also
 *       counts the TTL's entry in the expires table;</li>
 *   <li><b>round trips per decision</b>: commands the client sent, counted with {@code MONITOR}
 *       (which marks commands a Lua script ran as {@code [0 lua]}), and every command Redis ran,
 *       from {@code INFO commandstats} before and after (this includes those inside scripts), over
 *       {@value #DECISIONS} allowed decisions on fresh keys, on one warm key, and {@value #DECISIONS}
 *       rejected decisions on an exhausted key.</li>
 * </ul>
 *
 * Every contender gets 100 per hour (burst 100), so keys outlive the count (Sluice's TTL is the
 * time until the state equals an absent key, a few microseconds at the benchmarks' huge limit).
 * Every contender's callers are 16 characters ({@code fp-<8 hex of the contender's name>-<4 digits>}),
 * so key names differ only by what each contender adds around the caller, and a name-length
 * class of Redis's allocator does not favour one contender (Sluice's keys are
 * {@code sluice:{<caller>}:bench:<suffix>}: 34 to 36 characters).
 * Runs single-threaded, one decision at a time, so batching has nothing to merge here.
 */
public final class Footprint {

    static final int KEYS = 1_000;
    static final int DECISIONS = 200;

    private Footprint() {
    }

    /** One contender's counts. */
    public record Row(String contender, long bytesAfterOne, long bytesAfterHundred, double usedMemoryPerKey,
                      double tripsFresh, double tripsWarm, double tripsRejected,
                      double commandsFresh, double commandsWarm, double commandsRejected,
                      String warmByName, String rejectedByName) {
    }

    private static String byName(Counts counts) {
        StringBuilder byName = new StringBuilder();
        counts.all.forEach((command, calls) -> byName.append(byName.length() == 0 ? "" : ", ").append(command)
                .append(' ').append(format(calls / (double) DECISIONS)));
        return byName.toString();
    }

    /** Runs the counts for every contender in {@code names}, against {@code redis}. */
    public static List<Row> measure(BenchRedis redis, List<String> names) {
        List<Row> rows = new ArrayList<>();
        for (String name : names) {
            rows.add(measure(redis, name));
        }
        return rows;
    }

    static Row measure(BenchRedis redis, String name) {
        redis.flushIfOwned();
        RedissonClient client = redis.newClient();
        String[] keys = new String[KEYS + 2 * DECISIONS + 1];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = caller(name, i);
        }
        // A slow limit, so that keys live (TTLs of seconds to an hour) while they are counted.
        try (RedisContender subject = RedisContender.create(name, client, keys, 100, Duration.ofHours(1))) {
            subject.decide(keys.length - 1); // load the script, open the connection
            // Bytes: one fresh key after one decision; then the same key after 99 more.
            subject.decide(0);
            long afterOne = memoryUsage(redis, subject.redisKey(0));
            for (int j = 0; j < 99; j++) {
                subject.decide(0);
            }
            long afterHundred = memoryUsage(redis, subject.redisKey(0));
            long before = usedMemory(redis);
            for (int i = 1; i <= KEYS; i++) {
                subject.decide(i);
            }
            double perKey = (usedMemory(redis) - before) / (double) (KEYS);

            // Rejected: key 0 has spent its 100 per hour above.
            Counts rejected = count(redis, () -> {
                for (int i = 0; i < DECISIONS; i++) {
                    subject.decide(0);
                }
            });
            // Allowed, on fresh keys and on one warm key: a limit that never runs out here.
            try (RedisContender roomy = RedisContender.create(name, client, keys, 1_000_000, Duration.ofHours(1))) {
                roomy.decide(keys.length - 1);
                Counts fresh = count(redis, () -> {
                    for (int i = 0; i < DECISIONS; i++) {
                        roomy.decide(KEYS + 1 + i);
                    }
                });
                Counts warm = count(redis, () -> {
                    for (int i = 0; i < DECISIONS; i++) {
                        roomy.decide(KEYS + 1);
                    }
                });
                return new Row(name, afterOne, afterHundred, perKey,
                        fresh.sent / (double) DECISIONS, warm.sent / (double) DECISIONS,
                        rejected.sent / (double) DECISIONS,
                        fresh.total() / (double) DECISIONS, warm.total() / (double) DECISIONS,
                        rejected.total() / (double) DECISIONS, byName(warm), byName(rejected));
            }
        } finally {
            client.shutdown();
        }
    }

    /** Caller {@code i} of a contender: 16 characters for every contender, distinct between contenders. */
    static String caller(String name, int i) {
        return String.format("fp-%08x-%04d", name.hashCode(), i);
    }

    static String format(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : String.format("%.2f", value);
    }

    private static long memoryUsage(BenchRedis redis, String key) {
        String reply = redis.command("MEMORY", "USAGE", key, "SAMPLES", "0");
        return reply.isEmpty() ? -1 : Long.parseLong(reply.trim());
    }

    private static long usedMemory(BenchRedis redis) {
        return Long.parseLong(info(redis, "memory").get("used_memory"));
    }

    static Map<String, String> info(BenchRedis redis, String section) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String line : redis.command("INFO", section).split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#")) {
                values.put(line.substring(0, colon), line.substring(colon + 1));
            }
        }
        return values;
    }

    /** Calls per command from INFO commandstats, without the measuring commands themselves. */
    private static Map<String, Long> commandStats(BenchRedis redis) {
        Map<String, Long> calls = new TreeMap<>();
        info(redis, "commandstats").forEach((name, value) -> {
            String command = name.replace("cmdstat_", "");
            if (!isMeasuring(command)) {
                calls.put(command, Long.parseLong(value.substring("calls=".length(), value.indexOf(','))));
            }
        });
        return calls;
    }

    private static boolean isMeasuring(String command) {
        // Our own INFO/MEMORY/MONITOR/ECHO, and Redisson's connection keep-alive PINGs.
        return command.equals("info") || command.equals("memory") || command.equals("monitor")
                || command.equals("echo") || command.equals("ping") || command.equals("flushall");
    }

    private record Counts(long sent, Map<String, Long> all) {
        long total() {
            return all.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** Runs {@code work} under MONITOR and between two INFO commandstats. */
    private static Counts count(BenchRedis redis, Runnable work) {
        Map<String, Long> before = commandStats(redis);
        String marker = "sluice-bench-marker-" + System.nanoTime();
        URI uri = URI.create(redis.url());
        try (Socket socket = new Socket(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort())) {
            socket.setSoTimeout(30_000);
            socket.getOutputStream().write(Resp.encode("MONITOR"));
            socket.getOutputStream().flush();
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            if (!"+OK".equals(in.readLine())) {
                throw new IllegalStateException("MONITOR was refused");
            }
            CompletableFuture<Long> sent = CompletableFuture.supplyAsync(() -> {
                long count = 0;
                try {
                    for (String line; (line = in.readLine()) != null; ) {
                        if (line.contains(marker)) {
                            return count;
                        }
                        // A script's commands carry "[<db> lua]"; the client's carry its address.
                        if (!line.contains(" lua]") && !line.contains("\"ping\"") && !line.contains("\"PING\"")) {
                            count++;
                        }
                    }
                    throw new IllegalStateException("MONITOR stream ended before the marker");
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            work.run();
            redis.command("ECHO", marker);
            long clientCommands = sent.get(30, TimeUnit.SECONDS);
            Map<String, Long> after = commandStats(redis);
            Map<String, Long> delta = new TreeMap<>();
            after.forEach((command, calls) -> {
                long d = calls - before.getOrDefault(command, 0L);
                if (d > 0) {
                    delta.put(command, d);
                }
            });
            return new Counts(clientCommands, delta);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (Exception e) {
            throw new IllegalStateException("counting commands failed", e);
        }
    }
}
