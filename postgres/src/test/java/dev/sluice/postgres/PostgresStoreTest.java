package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Limit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import com.zaxxer.hikari.HikariDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The Postgres store's own promises, beyond the store test kit, against a real Postgres server. */
class PostgresStoreTest {

    private static HikariDataSource pool;

    @BeforeAll
    static void tables() {
        pool = TestPostgres.shared().pool(4);
        PostgresStore.builder(pool).createTable(true).sweepEvery(Duration.ZERO).build().close();
    }

    @AfterAll
    static void closePool() {
        pool.close();
    }

    private static String caller() {
        return "c-" + UUID.randomUUID();
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void operationsItCannotDoRefuseNamingTheOperation() {
        try (PostgresStore store = PostgresStore.builder(pool).sweepEvery(Duration.ZERO).build()) {
            List<Limit> limits = List.of(Limit.of("api", "10/1m"));
            Limit lease = Limit.concurrency("jobs", 2, Duration.ofSeconds(30));
            List<Supplier<CompletionStage<?>>> calls = List.of(
                    () -> store.reserve("a", limits, Duration.ofSeconds(1)),
                    () -> store.book("a", limits, Duration.ofSeconds(1)),
                    () -> store.acquireLease("a", lease, "l1"),
                    () -> store.releaseLease("a", lease, "l1"));
            List<String> names = List.of("RateLimitStore.reserve", "RateLimitStore.book",
                    "RateLimitStore.acquireLease", "RateLimitStore.releaseLease");
            for (int i = 0; i < calls.size(); i++) {
                CompletableFuture<?> call = calls.get(i).get().toCompletableFuture();
                assertThat(call).isCompletedExceptionally();
                assertThatThrownBy(call::get).cause()
                        .isInstanceOf(UnsupportedOperationException.class)
                        .hasMessageContaining("PostgresStore does not support " + names.get(i));
            }
        }
    }

    @Test
    void decisionsRunOnTheStoresOwnThreadsNeverTheCallers() throws Exception {
        WatchedDataSource watched = new WatchedDataSource(pool);
        try (PostgresStore store = PostgresStore.builder(watched).sweepEvery(Duration.ZERO).build()) {
            Decision d = await(store.decide(caller(), List.of(Limit.of("api", "10/1m"))));
            await(store.refund(caller(), List.of(Limit.of("api", "10/1m"))));
            assertThat(d.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            assertThat(watched.threads).isNotEmpty()
                    .allSatisfy(name -> assertThat(name).startsWith("sluice-postgres-"))
                    .doesNotContain(Thread.currentThread().getName());
        }
    }

    @Test
    void aFullQueueFailsAtOnceInsteadOfWaiting() throws Exception {
        WatchedDataSource watched = new WatchedDataSource(pool);
        watched.closeGate();
        try (PostgresStore store = PostgresStore.builder(watched).threads(1).queueCapacity(1)
                .sweepEvery(Duration.ZERO).build()) {
            List<Limit> limits = List.of(Limit.of("api", "10/1m"));
            String caller = caller();
            // the first holds the only thread (at the gate), the second waits in the queue
            CompletableFuture<Decision> first = store.decide(caller, limits).toCompletableFuture();
            CompletableFuture<Decision> second = store.decide(caller, limits).toCompletableFuture();
            CompletableFuture<Decision> third = store.decide(caller, limits).toCompletableFuture();
            assertThat(third).isCompletedExceptionally();
            assertThatThrownBy(third::get).isInstanceOf(ExecutionException.class).cause()
                    .isInstanceOf(RejectedExecutionException.class)
                    .hasMessageContaining("PostgresStore refused decide: all 1 threads are busy and 1 operations");
            assertThat(first).isNotDone();
            watched.gate.countDown();
            assertThat(await(first).quotas().get(0).remaining() + await(second).quotas().get(0).remaining())
                    .as("the two that were taken decided, one after the other").isEqualTo(9 + 8);
        }
    }

    @Test
    void aClosedStoreRefusesItsOperations() {
        PostgresStore store = PostgresStore.builder(pool).sweepEvery(Duration.ZERO).build();
        store.close();
        assertThatThrownBy(() -> await(store.decide(caller(), List.of(Limit.of("api", "10/1m")))))
                .cause().isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    @Test
    void eachCallerAndLimitIsOneRowThatExpiresByTheDatabasesClock() throws Exception {
        String caller = caller();
        Limit perMinute = Limit.of("api", "10/1m");
        Limit perDay = Limit.of("day", "1000/1d").withAlgorithm(dev.sluice.Algorithm.FIXED_WINDOW);
        long before = databaseNow();
        try (PostgresStore store = PostgresStore.builder(pool).sweepEvery(Duration.ZERO).build()) {
            assertThat(await(store.decide(caller, List.of(perMinute, perDay))).outcome())
                    .isEqualTo(Decision.Outcome.ALLOWED);
        }
        long after = databaseNow();
        try (Connection c = pool.getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT key, expires_at, cardinality(state) FROM sluice_rate_state"
                     + " WHERE key LIKE ? ORDER BY key")) {
            ps.setString(1, "sluice:{" + caller + "}:%");
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("sluice:{" + caller + "}:api:tb");
                // a token bucket short of one token of 10/1m is whole again 6 s later
                assertThat(rs.getLong(2)).isBetween(before + 6_000_000, after + 6_000_001);
                assertThat(rs.getInt(3)).isEqualTo(6);
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("sluice:{" + caller + "}:day:fw");
                assertThat(rs.getLong(2)).isBetween(before, after + 86_400_000_000L);
                assertThat(rs.next()).isFalse();
            }
        }
    }

    @Test
    void aPoolHandingOutConnectionsWithoutAutocommitStillKeepsEveryWrite() throws Exception {
        com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
        config.setJdbcUrl(TestPostgres.shared().jdbcUrl());
        config.setUsername("sluice");
        config.setMaximumPoolSize(2);
        config.setAutoCommit(false);
        String caller = caller();
        List<Limit> limits = List.of(Limit.of("manual-commit", "2/1d"));
        try (HikariDataSource manual = new HikariDataSource(config);
             PostgresStore store = PostgresStore.builder(manual).sweepEvery(Duration.ZERO).build()) {
            assertThat(await(store.decide(caller, limits)).quotas().get(0).remaining()).isEqualTo(1);
            assertThat(await(store.decide(caller, limits)).quotas().get(0).remaining()).isEqualTo(0);
            assertThat(await(store.decide(caller, limits)).outcome()).isEqualTo(Decision.Outcome.REJECTED);
        }
    }

    @Test
    void aLongOrUnusualCallerIsStoredHashed() throws Exception {
        String caller = "key with spaces {and braces} " + "x".repeat(500);
        try (PostgresStore store = PostgresStore.builder(pool).sweepEvery(Duration.ZERO).build()) {
            await(store.decide(caller, List.of(Limit.of("hashed", "10/1m"))));
        }
        try (Connection c = pool.getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT max(length(key)) FROM sluice_rate_state WHERE key LIKE 'sluice:{#%}:hashed:tb'")) {
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isBetween(1, 60);
            }
        }
    }

    @Test
    void createTableRunsTheShippedSchemaAndTwoInstancesMayRunItAtOnce() throws Exception {
        String schema = "created_" + UUID.randomUUID().toString().replace("-", "");
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        }
        try (HikariDataSource own = TestPostgres.shared().pool(4, schema, 5_000)) {
            List<CompletableFuture<Void>> builds = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                builds.add(CompletableFuture.runAsync(
                        () -> PostgresStore.builder(own).createTable(true).sweepEvery(Duration.ZERO).build().close()));
            }
            for (CompletableFuture<Void> build : builds) {
                build.get(60, TimeUnit.SECONDS);
            }
            try (PostgresStore store = PostgresStore.builder(own).createTable(true).sweepEvery(Duration.ZERO).build()) {
                assertThat(await(store.decide("a", List.of(Limit.of("api", "10/1m")))).outcome())
                        .isEqualTo(Decision.Outcome.ALLOWED);
                await(store.putOverride("api", "20/1m"));
                assertThat(await(store.overrides())).containsEntry("api", "20/1m");
            }
            try (Connection c = own.getConnection(); PreparedStatement ps = c.prepareStatement(
                    "SELECT count(*) FROM sluice_rate_state")) {
                try (ResultSet rs = ps.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).as("the rows are in the DataSource's schema").isEqualTo(1);
                }
            }
        }
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name")) {
            ps.setString(1, schema);
            List<String> tables = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    tables.add(rs.getString(1));
                }
            }
            assertThat(tables).containsExactly("sluice_override", "sluice_rate_state");
        }
    }

    @Test
    void theMigrationFileShipsInTheJar() throws Exception {
        try (InputStream in = PostgresStore.class.getResourceAsStream("/dev/sluice/postgres/schema.sql")) {
            assertThat(in).isNotNull();
            String sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(sql).contains("CREATE TABLE IF NOT EXISTS sluice_rate_state",
                    "CREATE TABLE IF NOT EXISTS sluice_override", "expires_at");
        }
    }

    @Test
    void badSettingsFailNamingTheParameterAndTheValue() {
        PostgresStore.Builder builder = PostgresStore.builder(pool);
        assertThatThrownBy(() -> builder.threads(0)).hasMessage("'threads' must be from 1 to 256, got '0'");
        assertThatThrownBy(() -> builder.queueCapacity(0)).hasMessage("'queueCapacity' must be at least 1, got '0'");
        assertThatThrownBy(() -> builder.sweepBatch(0)).hasMessage("'sweepBatch' must be from 1 to 10000, got '0'");
        assertThatThrownBy(() -> builder.sweepEvery(Duration.ofMillis(1)))
                .hasMessage("'sweepEvery' must be zero (off) or at least 10ms, got 'PT0.001S'");
    }

    private static long databaseNow() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT " + Table.DB_NOW)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
