package dev.sluice;

import dev.sluice.spi.RateLimitStore;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A store whose every call fails, as one that cannot be reached: the limiter's failure mode answers. */
final class BrokenStore implements RateLimitStore {
    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
        return CompletableFuture.failedFuture(new IllegalStateException("connection refused"));
    }

    @Override
    public CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
        return CompletableFuture.failedFuture(new IllegalStateException("connection refused"));
    }

    @Override
    public void close() {
    }
}
