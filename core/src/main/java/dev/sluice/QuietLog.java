package dev.sluice;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A warning logged at most once every ten seconds, under {@link RateLimiter}'s name (the one
 * users configure): a store that fails fails for every request, and one line says so. Thread-safe.
 */
final class QuietLog {

    private static final Logger LOG = LoggerFactory.getLogger(RateLimiter.class);
    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final AtomicLong last = new AtomicLong(System.nanoTime() - INTERVAL_NANOS);

    /** Logs unless this log has logged within the last ten seconds. */
    void warn(String format, Object... arguments) {
        if (due()) {
            LOG.warn(format, arguments);
        }
    }

    /**
     * Whether ten seconds have passed since this log was last due, claiming the turn if so: for a
     * caller whose message is costly to build, or logged at another level.
     */
    boolean due() {
        long now = System.nanoTime();
        long previous = last.get();
        return now - previous >= INTERVAL_NANOS && last.compareAndSet(previous, now);
    }
}
