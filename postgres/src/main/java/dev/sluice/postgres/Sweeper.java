package dev.sluice.postgres;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Deletes expired rows in the background, a small batch per statement: each batch is its own
 * short transaction that skips rows a decision holds, so no decision waits on the sweep for more
 * than one batch's delete. A run stops after {@link #MAX_BATCHES} batches (the rest waits for the
 * next run), so one run never holds a connection for long either. Expired rows left behind are
 * harmless: a decision reads them as absent.
 */
final class Sweeper implements Runnable {

    /** The most batches one run deletes. */
    static final int MAX_BATCHES = 20;

    private static final Logger LOG = LoggerFactory.getLogger(Sweeper.class);

    private final DataSource dataSource;
    private final int batch;
    private long lastWarning;

    Sweeper(DataSource dataSource, int batch) {
        this.dataSource = dataSource;
        this.batch = batch;
    }

    @Override
    public void run() {
        try {
            sweep();
        } catch (SQLException | RuntimeException e) {
            // A database that is down fails every decision already; one line a minute is enough here.
            long now = System.nanoTime();
            if (lastWarning == 0 || now - lastWarning > 60_000_000_000L) {
                lastWarning = now;
                LOG.warn("sluice-postgres: deleting expired rows failed, will try again: {}", e.toString());
            }
        }
    }

    /** One run: batches until one is short or {@link #MAX_BATCHES} were deleted; the rows deleted. */
    int sweep() throws SQLException {
        int total = 0;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            for (int i = 0; i < MAX_BATCHES; i++) {
                int deleted = Table.sweep(c, batch);
                total += deleted;
                if (deleted < batch) {
                    break;
                }
            }
        }
        return total;
    }
}
