package dev.sluice.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.postgres.PostgresStore;
import dev.sluice.postgres.TestPostgres;
import org.redisson.api.RedissonClient;

import java.io.IOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * The Postgres store beside Redis, in one run: a fixed-duration driver (not JMH) that measures
 * decisions per second of Sluice's {@link PostgresStore}, of a plain JDBC baseline (the same read
 * and compare-and-swap update by hand, one row per key) and of Sluice's Redisson store on the
 * harness's Redis, at each thread count, on 100,000 keys and on one hot key, every decision
 * allowed (a token bucket of 1,000,000,000 per hour, never emptied in a trial). At one thread it
 * also records every decision's latency (p50/p99), and it counts the database's round trips
 * (JDBC {@code execute*} and {@code commit} calls) or Redis's commands per decision.
 *
 * <p>The Postgres server is the one the postgres module's tests start ({@link TestPostgres}: a
 * temporary data directory on 127.0.0.1, {@code fsync=off}, Debian's server when installed, else
 * PostgreSQL 16 from Maven Central). Each trial uses keys of its own, so no trial meets another's rows.
 */
final class PostgresBenchmark {

    static final String[] NAMES = {"sluice-postgres", "jdbc-baseline", "sluice-redis"};
    static final int KEYS = 100_000;
    /**
     * Never emptied by a trial, so every decision takes the allowed path: the Redis store decides
     * a hot key's requests locally from leased tokens at millions per second, and a smaller bucket
     * would be empty before its measured window began.
     */
    static final long COUNT = 1_000_000_000;
    static final Duration PERIOD = Duration.ofHours(1);
    private static final int MAX_SAMPLES = 1 << 20;

    private PostgresBenchmark() {
    }

    /**
     * One trial's figures; {@code p50Micros}/{@code p99Micros} are NaN when latency was not recorded;
     * {@code statementMicrosPerDecision}, the time spent inside JDBC statements and commits per
     * decision (NaN for Redis), tells the database's share of the latency from the rest.
     */
    record Row(String contender, int keys, int threads, double seconds, long decisions, long allowed,
               long failures, double p50Micros, double p99Micros, double roundTripsPerDecision,
               double statementMicrosPerDecision) {

        double perSecond() {
            return decisions / seconds;
        }
    }

    /** A contender: decides for key {@code i}; its store failures so far. */
    interface Contender extends AutoCloseable {
        boolean decide(int i);

        long failures();

        @Override
        void close();
    }

    /** A started Postgres, its pool (wrapped to count round trips) and its description. */
    static final class Database implements AutoCloseable {
        final HikariDataSource pool;
        final DataSource counted;
        final LongAdder roundTrips = new LongAdder();
        final LongAdder statementNanos = new LongAdder();
        final String version;

        Database(int poolSize) {
            TestPostgres server = TestPostgres.shared();
            this.pool = server.pool(poolSize);
            this.counted = counting(pool, roundTrips, statementNanos);
            try (Connection c = pool.getConnection(); Statement s = c.createStatement();
                 ResultSet r = s.executeQuery("SELECT version()")) {
                r.next();
                this.version = r.getString(1);
                s.execute(Baseline.SCHEMA);
            } catch (SQLException e) {
                throw new IllegalStateException("the benchmark's Postgres did not answer: " + e.getMessage(), e);
            }
        }

        @Override
        public void close() {
            pool.close();
        }
    }

    /** Creates contender {@code name} over {@code keys}, {@code count} per {@code period}. */
    static Contender create(String name, Database db, RedissonClient redis, String[] keys, long count,
                            Duration period, int storeThreads) {
        switch (name) {
            case "sluice-postgres":
                return new SluicePostgres(db.counted, keys, Limit.of("bench", count, period), storeThreads);
            case "jdbc-baseline":
                return new Baseline(db.counted, keys, count, period);
            case "sluice-redis":
                RedisContender contender = RedisContender.create("sluice-token-bucket", redis, keys, count, period);
                return new Contender() {
                    @Override
                    public boolean decide(int i) {
                        return contender.decide(i);
                    }

                    @Override
                    public long failures() {
                        return contender.failures();
                    }

                    @Override
                    public void close() {
                        contender.close();
                    }
                };
            default:
                throw new IllegalArgumentException("Postgres contender must be one of " + String.join(", ", NAMES)
                        + ", got '" + name + "'");
        }
    }

    /** Every contender at every thread count, on {@link #KEYS} keys then one hot key. */
    static List<Row> measure(BenchRedis redis, List<String> names, int[] threads, Duration warm, Duration measured,
                             Consumer<String> warn, StringBuilder header) {
        int maxThreads = Arrays.stream(threads).max().orElse(1);
        List<Row> rows = new ArrayList<>();
        String loadBefore = loadAverage();
        RedissonClient client = redis.newClient();
        try (Database db = new Database(maxThreads + 4)) {
            header.append("- Postgres: ").append(db.version).append(", on 127.0.0.1 (fsync=off, its tests' server)\n")
                    .append("- Sluice's Postgres store with ").append(maxThreads)
                    .append(" store threads (the default is 4), pool of ").append(maxThreads + 4).append('\n')
                    .append("- each trial: warm-up ").append(warm.toMillis()).append(" ms, then measured ")
                    .append(measured.toMillis()).append(" ms; all threads decide back to back; keys drawn "
                            + "at random from 100,000 (most touched once or twice) or one hot key\n");
            int trial = 0;
            for (int keys : new int[] {KEYS, 1}) {
                for (int t : threads) {
                    for (String name : names) {
                        trial++;
                        String[] callers = new String[keys];
                        String prefix = "pg" + trial + "-" + Long.toHexString(System.nanoTime()) + "-";
                        for (int i = 0; i < keys; i++) {
                            callers[i] = prefix + i;
                        }
                        LongSupplier roundTrips = name.equals("sluice-redis") ? () -> redisCalls(redis)
                                : db.roundTrips::sum;
                        try (Contender contender = create(name, db, client, callers, COUNT, PERIOD, maxThreads)) {
                            Row row = trial(contender, name, keys, t, warm, measured, roundTrips,
                                    name.equals("sluice-redis") ? null : db.statementNanos::sum);
                            System.out.println(line(row));
                            rows.add(row);
                            if (row.failures() > 0 || row.allowed() != row.decisions()) {
                                warn.accept("Postgres part: " + name + " at " + t + " threads on " + keys + " keys: "
                                        + row.failures() + " store failures, " + (row.decisions() - row.allowed())
                                        + " refusals on a path that should allow all");
                            }
                        } catch (RuntimeException e) {
                            warn.accept("Postgres part: " + name + " at " + t + " threads on " + keys
                                    + " keys failed: " + e);
                        }
                    }
                }
            }
        } finally {
            client.shutdown();
        }
        header.append("- load average (1, 5, 15 min) before this part: ").append(loadBefore)
                .append("; after: ").append(loadAverage()).append(" (2 cores, shared with other builds)\n");
        return rows;
    }

    /** Runs {@code contender} from {@code threads} threads: warm-up, then the measured window. */
    static Row trial(Contender contender, String name, int keys, int threads, Duration warm, Duration measured,
                     LongSupplier roundTrips, LongSupplier statementNanos) {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicBoolean measuring = new AtomicBoolean();
        LongAdder decisions = new LongAdder();
        LongAdder allowed = new LongAdder();
        long[] samples = threads == 1 ? new long[MAX_SAMPLES] : null;
        int[] sampled = new int[1];
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                ThreadLocalRandom random = ThreadLocalRandom.current();
                while (!stop.get()) {
                    int i = keys == 1 ? 0 : random.nextInt(keys);
                    long start = System.nanoTime();
                    boolean ok = contender.decide(i);
                    long took = System.nanoTime() - start;
                    if (measuring.get()) {
                        decisions.increment();
                        if (ok) {
                            allowed.increment();
                        }
                        if (samples != null && sampled[0] < samples.length) {
                            samples[sampled[0]++] = took; // one thread only
                        }
                    }
                }
            }, "pg-bench-" + t);
            worker.start();
            workers.add(worker);
        }
        long failuresBefore;
        long tripsBefore;
        long t0;
        long t1;
        long tripsAfter;
        long nanosBefore;
        long nanosAfter;
        try {
            Thread.sleep(warm.toMillis());
            failuresBefore = contender.failures();
            tripsBefore = roundTrips.getAsLong();
            nanosBefore = statementNanos == null ? 0 : statementNanos.getAsLong();
            t0 = System.nanoTime();
            measuring.set(true);
            Thread.sleep(measured.toMillis());
            measuring.set(false);
            t1 = System.nanoTime();
            tripsAfter = roundTrips.getAsLong();
            nanosAfter = statementNanos == null ? 0 : statementNanos.getAsLong();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
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
        long n = decisions.sum();
        double p50 = Double.NaN;
        double p99 = Double.NaN;
        if (samples != null && sampled[0] > 0) {
            long[] sorted = Arrays.copyOf(samples, sampled[0]);
            Arrays.sort(sorted);
            p50 = sorted[(int) Math.min(sorted.length - 1, Math.floor(sorted.length * 0.50))] / 1_000.0;
            p99 = sorted[(int) Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] / 1_000.0;
        }
        return new Row(name, keys, threads, (t1 - t0) / 1e9, n, allowed.sum(), contender.failures() - failuresBefore,
                p50, p99, n == 0 ? Double.NaN : (double) (tripsAfter - tripsBefore) / n,
                n == 0 || statementNanos == null ? Double.NaN : (nanosAfter - nanosBefore) / 1_000.0 / n);
    }

    /** The Markdown tables of {@code rows}. */
    static String table(List<Row> rows, List<String> names, int[] threads) {
        StringBuilder md = new StringBuilder();
        md.append("| keys | threads |");
        names.forEach(n -> md.append(' ').append(n).append(" |"));
        boolean ratio = names.contains("sluice-postgres") && names.contains("jdbc-baseline");
        boolean versus = names.contains("sluice-postgres") && names.contains("sluice-redis");
        md.append(ratio ? " sluice-postgres / baseline |" : "").append(versus ? " sluice-postgres / redis |" : "");
        md.append("\n|---|---:|").append("---:|".repeat(names.size() + (ratio ? 1 : 0) + (versus ? 1 : 0)))
                .append('\n');
        for (int keys : new int[] {KEYS, 1}) {
            for (int t : threads) {
                md.append("| ").append(keys == 1 ? "1 (hot)" : String.format(Locale.ROOT, "%,d", keys))
                        .append(" | ").append(t).append(" |");
                for (String n : names) {
                    Row r = find(rows, n, keys, t);
                    md.append(' ').append(r == null ? "–" : String.format(Locale.ROOT, "%,.0f", r.perSecond()))
                            .append(" |");
                }
                if (ratio) {
                    md.append(' ').append(ratio(find(rows, "sluice-postgres", keys, t),
                            find(rows, "jdbc-baseline", keys, t))).append(" |");
                }
                if (versus) {
                    md.append(' ').append(ratio(find(rows, "sluice-postgres", keys, t),
                            find(rows, "sluice-redis", keys, t))).append(" |");
                }
                md.append('\n');
            }
        }
        md.append("\nDecisions per second (every one allowed). At 1 thread: latency p50 / p99 in µs; round trips "
                + "per decision (Postgres: JDBC execute and commit calls; Redis: scripts sent); and, for "
                + "Postgres, the mean µs per decision spent inside those calls (the rest is the client's):"
                + "\n\n| keys |");
        names.forEach(n -> md.append(' ').append(n).append(" |"));
        md.append("\n|---|").append("---:|".repeat(names.size())).append('\n');
        for (int keys : new int[] {KEYS, 1}) {
            md.append("| ").append(keys == 1 ? "1 (hot)" : String.format(Locale.ROOT, "%,d", keys)).append(" |");
            for (String n : names) {
                Row r = find(rows, n, keys, 1);
                md.append(' ').append(r == null || Double.isNaN(r.p50Micros()) ? "–"
                        : String.format(Locale.ROOT, "%.0f / %.0f; %.3f", r.p50Micros(), r.p99Micros(),
                        r.roundTripsPerDecision())
                        + (Double.isNaN(r.statementMicrosPerDecision()) ? ""
                        : String.format(Locale.ROOT, "; %.0f µs in SQL", r.statementMicrosPerDecision())))
                        .append(" |");
            }
            md.append('\n');
        }
        md.append("\nRound trips per decision at the highest thread count (a lost compare-and-swap adds a "
                + "read and a write):\n\n| keys |");
        int most = Arrays.stream(threads).max().orElse(1);
        names.forEach(n -> md.append(' ').append(n).append(" |"));
        md.append("\n|---|").append("---:|".repeat(names.size())).append('\n');
        for (int keys : new int[] {KEYS, 1}) {
            md.append("| ").append(keys == 1 ? "1 (hot)" : String.format(Locale.ROOT, "%,d", keys)).append(" |");
            for (String n : names) {
                Row r = find(rows, n, keys, most);
                md.append(' ').append(r == null ? "–" : String.format(Locale.ROOT, "%.3f", r.roundTripsPerDecision()))
                        .append(" |");
            }
            md.append('\n');
        }
        return md.toString();
    }

    static String line(Row r) {
        return String.format(Locale.ROOT, "postgres part: %-15s keys %6d threads %2d: %,8.0f decisions/s"
                        + " (%d in %.1f s, %d allowed, %d failures), p50/p99 %.0f/%.0f µs, %.2f round trips each,"
                        + " %.0f µs in SQL each",
                r.contender(), r.keys(), r.threads(), r.perSecond(), r.decisions(), r.seconds(), r.allowed(),
                r.failures(), r.p50Micros(), r.p99Micros(), r.roundTripsPerDecision(), r.statementMicrosPerDecision());
    }

    private static String ratio(Row a, Row b) {
        return a == null || b == null || b.perSecond() == 0 ? "–"
                : String.format(Locale.ROOT, "%.2f", a.perSecond() / b.perSecond());
    }

    private static Row find(List<Row> rows, String name, int keys, int threads) {
        return rows.stream().filter(r -> r.contender().equals(name) && r.keys() == keys && r.threads() == threads)
                .findFirst().orElse(null);
    }

    /** The machine's load average, as /proc/loadavg says (1, 5, 15 minutes). */
    static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + ", " + parts[1] + ", " + parts[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /**
     * Scripts sent to Redis so far, from INFO commandstats: the client's round trips for
     * decisions (the commands a script runs inside Redis are counted there too, and left out here).
     */
    private static long redisCalls(BenchRedis redis) {
        long calls = 0;
        for (var entry : Footprint.info(redis, "commandstats").entrySet()) {
            String value = entry.getValue();
            if ((entry.getKey().startsWith("cmdstat_eval") || entry.getKey().equals("cmdstat_fcall"))
                    && value.startsWith("calls=")) {
                calls += Long.parseLong(value.substring("calls=".length(), value.indexOf(',')));
            }
        }
        return calls;
    }

    /**
     * {@code dataSource} whose connections count, in {@code roundTrips}, each statement executed
     * and each commit (in autocommit, what the database is asked per decision) and add the time
     * spent in those calls to {@code nanos}.
     */
    static DataSource counting(DataSource dataSource, LongAdder roundTrips, LongAdder nanos) {
        InvocationHandler sourceHandler = (proxy, method, args) -> {
            Object result = invoke(dataSource, method, args);
            return method.getName().equals("getConnection") ? countingConnection((Connection) result, roundTrips, nanos)
                    : result;
        };
        return (DataSource) Proxy.newProxyInstance(PostgresBenchmark.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, sourceHandler);
    }

    private static Connection countingConnection(Connection connection, LongAdder roundTrips, LongAdder nanos) {
        InvocationHandler handler = (proxy, method, args) -> {
            String m = method.getName();
            if (m.equals("commit")) {
                roundTrips.increment();
                return timed(connection, method, args, nanos);
            }
            Object result = invoke(connection, method, args);
            if (result instanceof Statement statement && (m.equals("createStatement") || m.equals("prepareStatement")
                    || m.equals("prepareCall"))) {
                Class<?> type = result instanceof PreparedStatement ? PreparedStatement.class : Statement.class;
                InvocationHandler statements = (p, sm, sargs) -> {
                    if (sm.getName().startsWith("execute")) {
                        roundTrips.increment();
                        return timed(statement, sm, sargs, nanos);
                    }
                    return invoke(statement, sm, sargs);
                };
                return Proxy.newProxyInstance(PostgresBenchmark.class.getClassLoader(), new Class<?>[] {type},
                        statements);
            }
            return result;
        };
        return (Connection) Proxy.newProxyInstance(PostgresBenchmark.class.getClassLoader(),
                new Class<?>[] {Connection.class}, handler);
    }

    private static Object timed(Object target, java.lang.reflect.Method method, Object[] args, LongAdder nanos)
            throws Throwable {
        long start = System.nanoTime();
        try {
            return invoke(target, method, args);
        } finally {
            nanos.add(System.nanoTime() - start);
        }
    }

    private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** Sluice's Postgres store, behind a {@link RateLimiter} as an application uses it. */
    static final class SluicePostgres implements Contender {
        private final PostgresStore store;
        private final RateLimiter limiter;
        private final String[] keys;

        SluicePostgres(DataSource dataSource, String[] keys, Limit limit, int storeThreads) {
            this.keys = keys;
            this.store = PostgresStore.builder(dataSource).createTable(true).threads(storeThreads).build();
            // 5 s, as the Redis contenders: a 100 ms default could turn slow answers into fast open failures.
            this.limiter = RateLimiter.builder().limit(limit).store(store).timeout(Duration.ofSeconds(5)).build();
        }

        @Override
        public boolean decide(int i) {
            Decision decision = limiter.decide(keys[i]);
            return decision.allowed();
        }

        @Override
        public long failures() {
            return limiter.storeFailures();
        }

        @Override
        public void close() {
            store.close();
        }
    }

    /**
     * The floor under the store: a token bucket by hand over JDBC, one row per key, in autocommit:
     * one read (the row and the database's clock), then a compare-and-swap {@code UPDATE} on a
     * version column (or an {@code INSERT} for a new key), again on a lost race. No expiry column,
     * index, hashing of keys or executor: what the ratio to it shows is what Sluice adds.
     */
    static final class Baseline implements Contender {
        static final String SCHEMA = "CREATE TABLE IF NOT EXISTS bench_baseline (key text PRIMARY KEY,"
                + " tokens double precision NOT NULL, at bigint NOT NULL, version bigint NOT NULL)";
        private static final String READ = "SELECT c.now, s.tokens, s.at, s.version FROM (SELECT "
                + "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now) c"
                + " LEFT JOIN bench_baseline s ON s.key = ?";
        private static final String UPDATE = "UPDATE bench_baseline SET tokens = ?, at = ?, version = ?"
                + " WHERE key = ? AND version = ?";
        private static final String INSERT = "INSERT INTO bench_baseline (key, tokens, at, version)"
                + " VALUES (?, ?, ?, 0) ON CONFLICT (key) DO NOTHING";

        private final DataSource dataSource;
        private final String[] keys;
        private final double capacity;
        private final double perMicro;
        private final LongAdder failures = new LongAdder();

        Baseline(DataSource dataSource, String[] keys, long count, Duration period) {
            this.dataSource = dataSource;
            this.keys = keys;
            this.capacity = count;
            this.perMicro = count / (double) (period.toNanos() / 1_000);
        }

        @Override
        public boolean decide(int i) {
            try (Connection c = dataSource.getConnection()) {
                for (int attempt = 0; attempt < 64; attempt++) {
                    long now;
                    double tokens;
                    long version;
                    boolean found;
                    try (PreparedStatement read = c.prepareStatement(READ)) {
                        read.setString(1, keys[i]);
                        try (ResultSet r = read.executeQuery()) {
                            r.next();
                            now = r.getLong(1);
                            tokens = r.getDouble(2);
                            found = !r.wasNull();
                            long at = r.getLong(3);
                            version = r.getLong(4);
                            tokens = found ? Math.min(capacity, tokens + Math.max(0, now - at) * perMicro) : capacity;
                        }
                    }
                    if (tokens < 1) {
                        return false; // a refusal writes nothing
                    }
                    try (PreparedStatement write = c.prepareStatement(found ? UPDATE : INSERT)) {
                        if (found) {
                            write.setDouble(1, tokens - 1);
                            write.setLong(2, now);
                            write.setLong(3, version + 1);
                            write.setString(4, keys[i]);
                            write.setLong(5, version);
                        } else {
                            write.setString(1, keys[i]);
                            write.setDouble(2, tokens - 1);
                            write.setLong(3, now);
                        }
                        if (write.executeUpdate() == 1) {
                            return true;
                        }
                    }
                }
                failures.increment();
                return false;
            } catch (SQLException e) {
                failures.increment();
                return false;
            }
        }

        @Override
        public long failures() {
            return failures.sum();
        }

        @Override
        public void close() {
            // the pool is the database's
        }
    }
}
