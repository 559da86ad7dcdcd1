package dev.sluice;

import dev.sluice.spi.RateLimitStore;

import java.time.Duration;

/**
 * What every limiter shows of its settings and its way to the store, written once:
 * {@link RateLimiter} and {@link ConcurrencyLimiter} extend it. The settings are one
 * {@link LimiterSettings}; the store calls go through the limiter's {@link StoreResilience}.
 */
abstract class LimiterShell {

    final LimiterSettings settings;

    LimiterShell(LimiterSettings settings) {
        this.settings = settings;
    }

    /** The limiter's way to its store. */
    abstract StoreResilience<?, ?> resilience();

    /** The store this limiter decides on. */
    public RateLimitStore store() {
        return settings.store();
    }

    /** What a decision does when the store fails or is late. */
    public FailureMode failureMode() {
        return settings.failureMode();
    }

    /** The longest a decision waits on the store. */
    public Duration timeout() {
        return settings.timeout();
    }

    /**
     * Whether this limiter has stopped waiting on its store after repeated failures: while open,
     * decisions follow the failure mode at once, and one probe at a time retries the store.
     */
    public boolean storeCircuitOpen() {
        return resilience().circuitOpen();
    }

    /**
     * How many decisions were made without the store (errors, timeouts, an open circuit) since this
     * limiter was built.
     */
    public long storeFailures() {
        return resilience().failures();
    }
}
