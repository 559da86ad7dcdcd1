package dev.sluice;

import dev.sluice.spi.RateLimitStore;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * The settings a limiter's store calls run under, one value that every limiter's builder fills
 * ({@link LimiterBuilder}) and that {@link RateLimiter#withLimits} hands on whole: the store, the
 * failure mode, the timeout, shadow mode, the listener, and for a rate limiter the executor of
 * asynchronous decisions and the local share. The circuit breaker's pauses are
 * {@link CircuitBreaker}'s constants, the same for every limiter.
 *
 * @param store       where the state is held; never closed by a limiter
 * @param failureMode what a decision does when the store fails or is late
 * @param timeout     the longest a decision waits on the store
 * @param shadow      whether rejections are only reported
 * @param listener    hears every decision; {@code null}: none
 * @param executor    completes asynchronous decisions that waited on the store
 * @param localShare  the share of each limit decided locally with {@link FailureMode#LOCAL}
 */
record LimiterSettings(RateLimitStore store, FailureMode failureMode, Duration timeout, boolean shadow,
                       DecisionListener listener, Executor executor, double localShare) {

    LimiterSettings {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(failureMode, "failureMode");
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(executor, "executor");
    }

    /** These settings heard by {@code other} instead ({@code null}: none). */
    LimiterSettings withListener(DecisionListener other) {
        return new LimiterSettings(store, failureMode, timeout, shadow, other, executor, localShare);
    }
}
