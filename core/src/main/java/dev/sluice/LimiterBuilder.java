package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import dev.sluice.internal.CompletionExecutor;
import dev.sluice.internal.Durations;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * The settings every limiter's builder shares, written once: {@link RateLimiter.Builder} and
 * {@link ConcurrencyLimiter.Builder} extend it with their limits. {@link #settings()} turns them
 * into one {@link LimiterSettings}. Not thread-safe, as builders are not.
 *
 * @param <B> the builder's own type, which each setter returns
 */
abstract class LimiterBuilder<B extends LimiterBuilder<B>> {

    private RateLimitStore store;
    private FailureMode failureMode = FailureMode.OPEN;
    private Duration timeout = Durations.DEFAULT_TIMEOUT;
    private boolean shadow;
    private DecisionListener listener;
    /**
     * Pooled threads, a new one only when none is free (see {@link CompletionExecutor} for why not the JDK's default).
     */
    Executor executor = CompletionExecutor.EXECUTOR;
    double localShare = 1.0;

    LimiterBuilder() {
    }

    @SuppressWarnings("unchecked")
    final B self() {
        return (B) this;
    }

    /** The store; default a new {@link dev.sluice.memory.MemoryStore}. */
    public B store(RateLimitStore store) {
        this.store = Objects.requireNonNull(store, "store");
        return self();
    }

    /** What a decision does when the store fails or is late; default {@link FailureMode#OPEN}. */
    public B failureMode(FailureMode failureMode) {
        this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
        return self();
    }

    /** The longest a decision may wait on the store, from 1 ms to 1 minute; default 100 ms. */
    public B timeout(Duration timeout) {
        this.timeout = Durations.checkTimeout(timeout);
        return self();
    }

    /**
     * Shadow mode: decide and count as usual, but let every request through; a rejection that
     * would have happened becomes {@link Decision.Outcome#SHADOW_REJECTED}, consumes nothing (a
     * refused lease holds no place), and is counted and logged (at most every ten seconds). The
     * way to roll out a limit safely. Default off.
     */
    public B shadowMode(boolean shadow) {
        this.shadow = shadow;
        return self();
    }

    /** Hears every decision, e.g. {@link dev.sluice.metrics.MicrometerMetrics}; default none. */
    public B listener(DecisionListener listener) {
        this.listener = listener;
        return self();
    }

    /** The settings as they are now; a new in-memory store if none was given. */
    final LimiterSettings settings() {
        RateLimitStore chosen = store != null ? store : StoreProvider.forStore("memory").open("memory");
        return new LimiterSettings(chosen, failureMode, timeout, shadow, listener, executor, localShare);
    }

    /** The failure mode chosen so far, for a builder's checks. */
    final FailureMode chosenFailureMode() {
        return failureMode;
    }
}
