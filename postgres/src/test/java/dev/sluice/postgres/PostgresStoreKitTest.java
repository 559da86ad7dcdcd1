package dev.sluice.postgres;

import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.tck.Capability;
import dev.sluice.tck.RateLimitStoreKit;

import java.time.Duration;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The store test kit on the Postgres store, against a real Postgres server: every group but the
 * ones it declares unsupported (reservations, given-up slots, leases), whose refusals the kit
 * checks instead, the time injected.
 */
class PostgresStoreKitTest extends RateLimitStoreKit {

    private static final Set<Capability> UNSUPPORTED =
            Set.of(Capability.RESERVATIONS, Capability.GIVE_BACK, Capability.LEASES);

    private static DataSource dataSource;

    private static synchronized DataSource dataSource() {
        if (dataSource == null) {
            dataSource = TestPostgres.shared().pool(8);
            PostgresStore.builder(dataSource).createTable(true).sweepEvery(Duration.ZERO).build().close();
        }
        return dataSource;
    }

    @Override
    protected RateLimitStore newStore(TimeSource time) {
        return PostgresStore.builder(dataSource()).sweepEvery(Duration.ZERO).timeSourceForTesting(time).build();
    }

    @Override
    protected boolean supports(Capability capability) {
        return !UNSUPPORTED.contains(capability);
    }
}
