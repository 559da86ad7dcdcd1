package dev.sluice.postgres;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A real {@link DataSource} (the test server's pool) that notes which threads ask it for a
 * connection and, while {@link #gate} is closed, holds them back: to see where the store works.
 */
final class WatchedDataSource implements DataSource {

    private final DataSource delegate;
    final Set<String> threads = ConcurrentHashMap.newKeySet();
    /** Counted down to let connections through; at zero from the start unless {@link #closeGate} was called. */
    volatile CountDownLatch gate = new CountDownLatch(0);

    WatchedDataSource(DataSource delegate) {
        this.delegate = delegate;
    }

    void closeGate() {
        gate = new CountDownLatch(1);
    }

    @Override
    public Connection getConnection() throws SQLException {
        threads.add(Thread.currentThread().getName());
        try {
            if (!gate.await(30, TimeUnit.SECONDS)) {
                throw new SQLException("the test's gate stayed closed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted at the test's gate", e);
        }
        return delegate.getConnection();
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("the store asks for connections without credentials");
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        return delegate.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return delegate.isWrapperFor(type);
    }
}
