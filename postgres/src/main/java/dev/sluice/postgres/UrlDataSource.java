package dev.sluice.postgres;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The connections of a store opened from a {@code store=} URL, where the application handed no
 * pool: the JDBC driver's connections, at most {@code idle} kept open between operations. The
 * store's threads are its only users, so it never holds more connections than the store has
 * threads, and needs no wait. A connection through which any error passed is closed instead of
 * kept (after a restart of the server the next operation connects anew); one idle for more than
 * {@link #CHECK_AFTER_NANOS} is checked before it is handed out.
 */
final class UrlDataSource implements DataSource, AutoCloseable {

    static final long CHECK_AFTER_NANOS = 5_000_000_000L;

    private final String url;
    private final Properties properties;
    private final int idle;
    private final ConcurrentLinkedDeque<Idle> pool = new ConcurrentLinkedDeque<>();
    private final AtomicInteger pooled = new AtomicInteger();
    private volatile boolean closed;

    private record Idle(Connection connection, long since) {
    }

    UrlDataSource(String url, Properties properties, int idle) {
        this.url = url;
        this.properties = properties;
        this.idle = idle;
    }

    @Override
    public Connection getConnection() throws SQLException {
        for (Idle kept = pool.pollFirst(); kept != null; kept = pool.pollFirst()) {
            pooled.decrementAndGet();
            Connection c = kept.connection();
            if (System.nanoTime() - kept.since() < CHECK_AFTER_NANOS || c.isValid(2)) {
                return wrap(c);
            }
            quietlyClose(c);
        }
        return wrap(DriverManager.getConnection(url, properties));
    }

    private Connection wrap(Connection physical) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, new Handler(physical));
    }

    /** Passes calls through; {@code close} hands the connection back unless an error passed or it was closed. */
    private final class Handler implements InvocationHandler {
        private final Connection physical;
        private boolean failed;
        private boolean released;

        Handler(Connection physical) {
            this.physical = physical;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            switch (method.getName()) {
                case "close" -> {
                    release();
                    return null;
                }
                case "isClosed" -> {
                    return released || physical.isClosed();
                }
                case "equals" -> {
                    return proxy == args[0];
                }
                case "hashCode" -> {
                    return System.identityHashCode(proxy);
                }
                default -> {
                    if (released) {
                        throw new SQLException("connection already closed");
                    }
                    try {
                        return method.invoke(physical, args);
                    } catch (InvocationTargetException e) {
                        failed = true;
                        throw e.getCause();
                    }
                }
            }
        }

        private void release() {
            if (released) {
                return;
            }
            released = true;
            boolean keep = !failed && !closed;
            try {
                keep = keep && !physical.isClosed() && physical.getAutoCommit();
            } catch (SQLException e) {
                keep = false;
            }
            if (keep && pooled.incrementAndGet() <= idle) {
                pool.addFirst(new Idle(physical, System.nanoTime()));
                if (closed) {
                    close(); // closed meanwhile: nothing is kept after close
                }
            } else {
                if (keep) {
                    pooled.decrementAndGet();
                }
                quietlyClose(physical);
            }
        }
    }

    /** Closes the connections kept; those in use are closed when they are handed back. */
    @Override
    public void close() {
        closed = true;
        for (Idle kept = pool.pollFirst(); kept != null; kept = pool.pollFirst()) {
            pooled.decrementAndGet();
            quietlyClose(kept.connection());
        }
    }

    private static void quietlyClose(Connection c) {
        try {
            c.close();
        } catch (SQLException ignored) {
            // gone already
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("the store's connections carry the credentials of its URL");
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        // DriverManager's own
    }

    @Override
    public void setLoginTimeout(int seconds) {
        // the URL's connectTimeout
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException("no java.util.logging here");
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        throw new SQLException("not a wrapper of " + type.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> type) {
        return false;
    }
}
