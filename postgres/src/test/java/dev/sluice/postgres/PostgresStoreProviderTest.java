package dev.sluice.postgres;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import com.zaxxer.hikari.HikariDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code store=postgresql://...} and {@code store=jdbc:postgresql:...}, found by scheme as the web layer does. */
class PostgresStoreProviderTest {

    private static String hostPortDatabase() {
        return TestPostgres.shared().jdbcUrl().substring("jdbc:postgresql://".length());
    }

    private static Decision decide(RateLimitStore store, String caller) throws Exception {
        return store.decide(caller, List.of(Limit.of("provided", "10/1m"))).toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
    }

    @Test
    void aPostgresqlUrlOpensAStoreOnConnectionsOfItsOwn() throws Exception {
        String application = "sluice-provider-" + UUID.randomUUID().toString().substring(0, 8);
        String store = "postgresql://sluice@" + hostPortDatabase() + "?create-table=true&ApplicationName="
                + application;
        StoreProvider provider = StoreProvider.forStore(store);
        assertThat(provider).isInstanceOf(PostgresStoreProvider.class);
        String caller = "c-" + UUID.randomUUID();
        try (RateLimitStore opened = provider.open(store)) {
            for (int i = 0; i < 20; i++) {
                assertThat(decide(opened, caller).quotas().get(0).remaining()).isEqualTo(Math.max(0, 9 - i));
            }
            assertThat(connections(application)).as("connections kept open between decisions").isBetween(1L, 4L);
        }
        // a server process ends a moment after its client hung up
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long left = connections(application);
        while (left > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
            left = connections(application);
        }
        assertThat(left).as("connections 10 s after the store closed").isZero();
    }

    @Test
    void aJdbcUrlOpensAStoreToo() throws Exception {
        String store = "jdbc:postgresql://" + hostPortDatabase() + "?user=sluice&create-table=true";
        try (RateLimitStore opened = StoreProvider.forStore(store).open(store)) {
            assertThat(decide(opened, "c-" + UUID.randomUUID()).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        }
    }

    @Test
    void theUrlIsReadIntoTheDriversUrlAndCredentials() {
        PostgresStoreProvider.Connection c = PostgresStoreProvider.connection(
                "postgresql://app:p%40ss@db.example:5433/limits?create-table=true&sslmode=require");
        assertThat(c.url()).isEqualTo("jdbc:postgresql://db.example:5433/limits?sslmode=require");
        assertThat(c.properties()).containsEntry("user", "app").containsEntry("password", "p@ss");
        assertThat(c.createTable()).isTrue();
        assertThat(PostgresStoreProvider.connection("jdbc:postgresql://db/limits?user=app").createTable()).isFalse();
    }

    @Test
    void aMalformedValueFailsNamingItWithoutItsPassword() {
        assertThatThrownBy(() -> StoreProvider.forStore("postgresql://app:s3cret@db.example"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("'store' must be postgresql://")
                .hasMessageEndingWith("got 'postgresql://app:***@db.example'")
                .message().doesNotContain("s3cret");
        assertThatThrownBy(() -> StoreProvider.forStore("postgresql://app:s3cret@db/limits?create-table=yes"))
                .hasMessage("'store' parameter 'create-table' must be true or false, got 'yes'");
        assertThatThrownBy(() -> StoreProvider.forStore("jdbc:mysql://db/limits"))
                .hasMessageStartingWith("'store' must be postgresql://");
    }

    private static long connections(String application) throws Exception {
        try (HikariDataSource pool = TestPostgres.shared().pool(1);
             Connection c = pool.getConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")) {
            ps.setString(1, application);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
