package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.internal.Keys;
import dev.sluice.spi.CompiledLimit;
import dev.sluice.spi.LimitKeys;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.algorithm.RateAlgorithm;
import dev.sluice.spi.algorithm.Verdict;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * Keeps counting state in Postgres, for applications that have Postgres and no Redis: plain JDBC
 * on the application's {@link DataSource} (its driver, its pool), so several application instances
 * on one database share their limits.
 *
 * <pre>{@code
 * RateLimitStore store = PostgresStore.builder(dataSource).createTable(true).build();
 * RateLimiter limiter = RateLimiter.builder().store(store).limit(Limit.of("api", "100/1m")).build();
 * }</pre>
 *
 * <p><b>How a decision is made.</b> One row per caller and limit in {@code sluice_rate_state}
 * (see {@code schema.sql}, shipped beside this class, or {@link Builder#createTable}): a decision
 * reads its rows and the database's clock ({@code clock_timestamp()}, in microseconds) in one
 * round trip, computes with the same Java arithmetic as the in-memory store
 * ({@link RateAlgorithm}), and writes only if each row still holds the version it read
 * ({@code UPDATE ... WHERE version = ?}, or {@code INSERT ... ON CONFLICT DO NOTHING} for a new
 * row); several limits are written in one transaction, all or none. A writer that lost the race
 * reads again, at most {@value #MAX_ATTEMPTS} times, and never past the limiter's deadline. A
 * refusal writes nothing. Each row carries {@code expires_at}, from which its state equals an
 * absent one: such rows read as absent and are deleted in the background, a small batch per
 * transaction ({@link Builder#sweepEvery}).
 *
 * <p><b>Threads.</b> JDBC blocks, so every operation runs on this store's own bounded pool
 * ({@link Builder#threads}, {@link Builder#queueCapacity}), never on the caller's thread; a full
 * queue fails the operation at once. Thread-safe.
 *
 * <p><b>Failure.</b> A database that is down, a pool that has no connection, a statement past
 * {@code 5 s} or a full queue completes the stage exceptionally, and the limiter applies its
 * failure mode. A write whose commit was lost on the way is not sent again: it may have counted.
 *
 * <p><b>Not supported</b> (each refuses with an {@link UnsupportedOperationException} naming
 * the operation): reservations ({@link #reserve}, {@link #book}, so {@code RateLimiter.acquire}
 * and {@code Permits}) and concurrency leases ({@link #acquireLease}, {@link #releaseLease}).
 * Decisions, changed limits, {@link #refund}, {@link #pause}, {@link #reset} and overrides are.
 */
public final class PostgresStore implements RateLimitStore {

    /** The default number of threads that talk to the database. */
    public static final int DEFAULT_THREADS = 4;
    /** The default number of operations waiting for a thread before new ones fail. */
    public static final int DEFAULT_QUEUE_CAPACITY = 1_000;
    /** The default pause between two background deletions of expired rows. */
    public static final Duration DEFAULT_SWEEP_EVERY = Duration.ofMinutes(1);
    /** The default number of expired rows one background delete removes. */
    public static final int DEFAULT_SWEEP_BATCH = 500;
    /** How often an operation reads and computes again after another writer came first. */
    public static final int MAX_ATTEMPTS = 64;

    private static final AtomicInteger STORES = new AtomicInteger();

    private final DataSource dataSource;
    /** The clock of the tests; {@code null}: the database's. */
    private final TimeSource testTime;
    private final ThreadPoolExecutor executor;
    private final ScheduledExecutorService sweeping;
    private final Sweeper sweeper;
    private final int threads;
    private final int queueCapacity;
    /** What the store opened for itself (a provider's connections), closed with it; or {@code null}. */
    private final AutoCloseable owned;
    private volatile boolean closed;

    private PostgresStore(Builder builder) {
        this.dataSource = builder.dataSource;
        this.testTime = builder.testTime;
        this.threads = builder.threads;
        this.queueCapacity = builder.queueCapacity;
        this.owned = builder.owned;
        int id = STORES.incrementAndGet();
        this.executor = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(queueCapacity), named("sluice-postgres-" + id + "-"),
                new ThreadPoolExecutor.AbortPolicy());
        // Idle stores hold no threads: a test suite (or an application) may open many.
        executor.allowCoreThreadTimeOut(true);
        this.sweeper = new Sweeper(dataSource, builder.sweepBatch);
        if (builder.sweepEvery.isZero()) {
            this.sweeping = null;
        } else {
            ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1,
                    named("sluice-postgres-" + id + "-sweeper-"));
            scheduler.setRemoveOnCancelPolicy(true);
            long every = builder.sweepEvery.toMillis();
            scheduler.scheduleWithFixedDelay(sweeper, every, every, TimeUnit.MILLISECONDS);
            this.sweeping = scheduler;
        }
    }

    /**
     * A builder for a store on {@code dataSource}, the application's (pooled) connections to
     * Postgres. The store never closes it.
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
        return run("decide", c -> decide(c, caller, limits, 0, false));
    }

    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits, long deadlineNanos, boolean fresh) {
        return run("decide", c -> decide(c, caller, limits, deadlineNanos, true));
    }

    private Decision decide(Connection c, String caller, List<Limit> limits, long deadline, boolean hasDeadline)
            throws SQLException {
        int n = limits.size();
        RateAlgorithm[] algorithms = algorithms(limits);
        Verdict[] verdicts = new Verdict[n];
        for (int i = 0; i < n; i++) {
            verdicts[i] = new Verdict();
        }
        String[] keys = keys(caller, limits);
        return casLoop(c, "decide", keys, deadline, hasDeadline, (now, rows, writes) -> {
            long[][] current = new long[n][];
            boolean all = true;
            for (int i = 0; i < n; i++) {
                current[i] = rows[i].current(now, algorithms[i].absent());
                all &= algorithms[i].fits(current[i], now, limits.get(i).cost());
            }
            for (int i = 0; i < n; i++) {
                long[] s = current[i];
                // into: a new array, so the row read stays what the write compares against
                long[] next = algorithms[i].evaluate(s, now, limits.get(i).cost(), all ? new long[s.length] : null,
                        verdicts[i]);
                if (all) {
                    writes.add(new Write(keys[i], rows[i], next, now + verdicts[i].ttlMicros()));
                }
            }
            return Decisions.of(all, limits, verdicts);
        });
    }

    /**
     * Gives back one request's spending under these limits, all or none; see {@link RateLimitStore#refund}.
     * A row that has expired or is absent has nothing to give back.
     */
    @Override
    public CompletionStage<Void> refund(String caller, List<Limit> limits) {
        return run("refund", c -> {
            RateAlgorithm[] algorithms = algorithms(limits);
            String[] keys = keys(caller, limits);
            return casLoop(c, "refund", keys, 0, false, (now, rows, writes) -> {
                for (int i = 0; i < rows.length; i++) {
                    long[] s = rows[i].current(now, null);
                    if (s != null) {
                        long[] next = algorithms[i].refund(s, now, limits.get(i).cost(), null);
                        if (next != s) {
                            writes.add(new Write(keys[i], rows[i], next, rows[i].expiresAt()));
                        }
                    }
                }
                return null;
            });
        });
    }

    /** Pauses these limits for {@code pause}, all or none; see {@link RateLimitStore#pause}. */
    @Override
    public CompletionStage<Void> pause(String caller, List<Limit> limits, Duration pause) {
        long micros = RateLimitStore.checkPause(pause);
        return run("pause", c -> {
            RateAlgorithm[] algorithms = algorithms(limits);
            String[] keys = keys(caller, limits);
            return casLoop(c, "pause", keys, 0, false, (now, rows, writes) -> {
                for (int i = 0; i < rows.length; i++) {
                    long[] next = algorithms[i].pause(rows[i].current(now, algorithms[i].absent()), now,
                            now + micros, null);
                    writes.add(new Write(keys[i], rows[i], next, algorithms[i].expiresAt(next)));
                }
                return null;
            });
        });
    }

    /** Deletes the caller's rows under these limits; see {@link RateLimitStore#reset}. */
    @Override
    public CompletionStage<Void> reset(String caller, List<Limit> limits) {
        return run("reset", c -> {
            Table.delete(c, keys(caller, limits));
            return null;
        });
    }

    /** The overrides in {@code sluice_override}, written by any instance; see {@link RateLimitStore#overrides}. */
    @Override
    public CompletionStage<Map<String, String>> overrides() {
        return run("overrides", Table::overrides);
    }

    /** Writes or clears ({@code null}) a policy's override; see {@link RateLimitStore#putOverride}. */
    @Override
    public CompletionStage<Void> putOverride(String policy, String value) {
        Objects.requireNonNull(policy, "policy");
        return run("putOverride", c -> {
            Table.putOverride(c, policy, value);
            return null;
        });
    }

    /** Refuses: see the class comment. */
    @Override
    public CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
        return CompletableFuture.failedFuture(unsupported("reserve", "reservations ahead of time, "
                + "for RateLimiter.acquire and Permits"));
    }

    /** Refuses: see the class comment. */
    @Override
    public CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
        return CompletableFuture.failedFuture(unsupported("book", "reservations ahead of time, "
                + "for RateLimiter.acquire and Permits"));
    }

    /** Refuses: see the class comment. */
    @Override
    public CompletionStage<Decision> acquireLease(String caller, Limit limit, String leaseId) {
        return CompletableFuture.failedFuture(unsupported("acquireLease", "concurrency leases"));
    }

    /** Refuses: see the class comment. */
    @Override
    public CompletionStage<Void> releaseLease(String caller, Limit limit, String leaseId) {
        return CompletableFuture.failedFuture(unsupported("releaseLease", "concurrency leases"));
    }

    private static UnsupportedOperationException unsupported(String operation, String what) {
        return new UnsupportedOperationException("PostgresStore does not support RateLimitStore." + operation
                + " (" + what + "): use the memory or the Redis store for it");
    }

    /**
     * Stops taking operations; those already queued still run. The {@link DataSource} given to
     * {@link #builder} stays open (a store opened from a {@code store=} URL closes its own connections).
     */
    @Override
    public void close() {
        closed = true;
        executor.shutdown();
        if (sweeping != null) {
            sweeping.shutdownNow();
        }
        if (owned != null) {
            try {
                executor.awaitTermination(5, TimeUnit.SECONDS);
                owned.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                // closing connections of a store that is gone: nothing left to do
            }
        }
    }

    /** One background deletion now, as the scheduled one does; the rows deleted. For tests. */
    int sweepNow() throws SQLException {
        return sweeper.sweep();
    }

    /** What an operation does on a connection, on a store thread. */
    private interface Work<T> {
        T apply(Connection c) throws SQLException;
    }

    /** Runs {@code work} on this store's pool with a connection of its own, never on the caller's thread. */
    private <T> CompletableFuture<T> run(String operation, Work<T> work) {
        CompletableFuture<T> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(new IllegalStateException("PostgresStore is closed: " + operation));
            return result;
        }
        try {
            executor.execute(() -> {
                try (Connection c = dataSource.getConnection()) {
                    // A pool may hand out connections without autocommit (and reset them when they
                    // come back): a write in autocommit would then be rolled back, unseen.
                    if (!c.getAutoCommit()) {
                        c.setAutoCommit(true);
                    }
                    result.complete(work.apply(c));
                } catch (SQLException | RuntimeException e) {
                    result.completeExceptionally(e);
                }
            });
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(new RejectedExecutionException("PostgresStore refused " + operation
                    + ": " + (closed ? "the store is closed" : "all " + threads + " threads are busy and "
                    + queueCapacity + " operations are waiting"), e));
        }
        return result;
    }

    /** One read-compute step of a compare-and-swap: adds what to write to {@code writes}, answers the result. */
    private interface Step<T> {
        T apply(long now, Row[] rows, List<Write> writes);
    }

    /**
     * Reads the rows of {@code keys} with the clock, lets {@code step} compute, and writes what it
     * asks for if no other writer came first; else again, up to {@link #MAX_ATTEMPTS} times and,
     * with {@code hasDeadline}, not past {@code deadline} ({@link System#nanoTime()}).
     */
    private <T> T casLoop(Connection c, String operation, String[] keys, long deadline, boolean hasDeadline,
                          Step<T> step) throws SQLException {
        for (int attempt = 1; ; attempt++) {
            if (hasDeadline && System.nanoTime() - deadline > 0) {
                throw new SQLException("PostgresStore gave up " + operation + " at the limiter's deadline after "
                        + (attempt - 1) + " attempts");
            }
            Table.Snapshot read = Table.read(c, keys);
            long now = testTime != null ? testTime.nowMicros() : read.databaseNow();
            List<Write> writes = new ArrayList<>(keys.length);
            T result = step.apply(now, read.rows(), writes);
            if (writes.isEmpty()) {
                return result;
            }
            if (Table.write(c, writes)) {
                return result;
            }
            if (attempt == MAX_ATTEMPTS) {
                throw new SQLException("PostgresStore gave up " + operation + " after " + MAX_ATTEMPTS
                        + " writes lost to other writers of the same rows");
            }
        }
    }

    private static String[] keys(String caller, List<Limit> limits) {
        String tag = Keys.tag(caller);
        String[] keys = new String[limits.size()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = LimitKeys.key(tag, limits.get(i));
        }
        return keys;
    }

    private static RateAlgorithm[] algorithms(List<Limit> limits) {
        RateAlgorithm[] algorithms = new RateAlgorithm[limits.size()];
        for (int i = 0; i < algorithms.length; i++) {
            algorithms[i] = RateAlgorithm.of(CompiledLimit.of(limits.get(i)));
        }
        return algorithms;
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread thread = new Thread(task, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Settings of a {@link PostgresStore}; each setter checks its value and names it when it is bad. */
    public static final class Builder {
        private final DataSource dataSource;
        private boolean createTable;
        private int threads = DEFAULT_THREADS;
        private int queueCapacity = DEFAULT_QUEUE_CAPACITY;
        private Duration sweepEvery = DEFAULT_SWEEP_EVERY;
        private int sweepBatch = DEFAULT_SWEEP_BATCH;
        private TimeSource testTime;
        private AutoCloseable owned;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * Whether {@link #build} creates the tables when they are missing, running the
         * {@code schema.sql} shipped in this jar (idempotent; concurrent instances wait for each
         * other). Default {@code false}: the tables come from the application's migrations.
         */
        public Builder createTable(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /**
         * Threads that talk to the database, at most this many connections at once; 1 to 256,
         * default {@value #DEFAULT_THREADS}. Keep it below the pool's size.
         */
        public Builder threads(int threads) {
            if (threads < 1 || threads > 256) {
                throw new IllegalArgumentException("'threads' must be from 1 to 256, got '" + threads + "'");
            }
            this.threads = threads;
            return this;
        }

        /** Operations that may wait for a thread before new ones fail at once; 1 or more, default 1,000. */
        public Builder queueCapacity(int queueCapacity) {
            if (queueCapacity < 1) {
                throw new IllegalArgumentException("'queueCapacity' must be at least 1, got '" + queueCapacity + "'");
            }
            this.queueCapacity = queueCapacity;
            return this;
        }

        /**
         * The pause between two background deletions of expired rows; {@link Duration#ZERO} turns
         * them off (another instance, or a job of the application's, deletes them). At least
         * 10 ms; default one minute.
         */
        public Builder sweepEvery(Duration sweepEvery) {
            Objects.requireNonNull(sweepEvery, "sweepEvery");
            if (!sweepEvery.isZero() && sweepEvery.compareTo(Duration.ofMillis(10)) < 0) {
                throw new IllegalArgumentException("'sweepEvery' must be zero (off) or at least 10ms, got '"
                        + sweepEvery + "'");
            }
            this.sweepEvery = sweepEvery;
            return this;
        }

        /** Expired rows one delete removes (one short transaction); 1 to 10,000, default 500. */
        public Builder sweepBatch(int sweepBatch) {
            if (sweepBatch < 1 || sweepBatch > 10_000) {
                throw new IllegalArgumentException("'sweepBatch' must be from 1 to 10000, got '" + sweepBatch + "'");
            }
            this.sweepBatch = sweepBatch;
            return this;
        }

        /**
         * Decides on this clock instead of the database's. For tests only: the background deletion
         * still goes by the database's clock.
         */
        public Builder timeSourceForTesting(TimeSource time) {
            this.testTime = Objects.requireNonNull(time, "time");
            return this;
        }

        /** Closes {@code owned} when the store closes: the provider's own connections. */
        Builder closing(AutoCloseable owned) {
            this.owned = owned;
            return this;
        }

        /**
         * Builds the store; with {@link #createTable}, creates the tables first.
         *
         * @throws IllegalStateException if the tables were to be created and could not be
         */
        public PostgresStore build() {
            if (createTable) {
                try (Connection c = dataSource.getConnection()) {
                    Table.create(c);
                } catch (SQLException e) {
                    throw new IllegalStateException("PostgresStore could not create its tables: " + e.getMessage(), e);
                }
            }
            return new PostgresStore(this);
        }
    }
}
