package dev.sluice.postgres;

import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.Decision;
import dev.sluice.Limit;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Expired rows go in the background, a small batch per statement; live rows stay. */
class SweeperTest {

    /** A schema of this test's own, with the store's tables, so that counts are this test's only. */
    private static HikariDataSource ownSchema() throws SQLException {
        String schema = "sweep_" + UUID.randomUUID().toString().replace("-", "");
        HikariDataSource pool = TestPostgres.shared().pool(2);
        try (pool; Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        }
        HikariDataSource own = TestPostgres.shared().pool(4, schema, 5_000);
        PostgresStore.builder(own).createTable(true).sweepEvery(Duration.ZERO).build().close();
        return own;
    }

    private static long count(HikariDataSource pool, String where) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM sluice_rate_state WHERE " + where)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void expiredRowsAreDeletedInBoundedBatchesAndLiveRowsKept() throws Exception {
        try (HikariDataSource pool = ownSchema();
             PostgresStore store = PostgresStore.builder(pool).sweepBatch(50).sweepEvery(Duration.ZERO).build()) {
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                s.execute("INSERT INTO sluice_rate_state (key, state, version, expires_at)"
                        + " SELECT 'expired-' || i, ARRAY[1, 0, 0]::bigint[], i, i FROM generate_series(1, 1234) i");
                s.execute("INSERT INTO sluice_rate_state (key, state, version, expires_at)"
                        + " SELECT 'live-' || i, ARRAY[1, 0, 0]::bigint[], i, " + Table.DB_NOW + " + 3600000000"
                        + " FROM generate_series(1, 10) i");
            }
            assertThat(store.sweepNow()).as("one run: at most 20 batches of 50").isEqualTo(1000);
            assertThat(store.sweepNow()).as("the rest").isEqualTo(234);
            assertThat(store.sweepNow()).isZero();
            assertThat(count(pool, "key LIKE 'live-%'")).isEqualTo(10);
            assertThat(count(pool, "true")).isEqualTo(10);
        }
    }

    @Test
    void theBackgroundDeletionRemovesRowsOnceTheyExpireByTheDatabasesClock() throws Exception {
        try (HikariDataSource pool = ownSchema();
             PostgresStore store = PostgresStore.builder(pool).sweepEvery(Duration.ofMillis(50)).build()) {
            // 10 per 100 ms: a row short of one token is whole again, so expired, 10 ms later
            List<Limit> limits = List.of(Limit.of("short", "10/100ms"));
            for (int i = 0; i < 20; i++) {
                Decision d = store.decide("caller-" + i, limits).toCompletableFuture().get(30, TimeUnit.SECONDS);
                assertThat(d.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long left = count(pool, "true");
            while (left > 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
                left = count(pool, "true");
            }
            assertThat(left).as("rows left 30 s after they expired").isZero();
        }
    }
}
