package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.internal.CompletionExecutor;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * A {@link StoreResilience} around a rate limiter's store call ({@link StoreDecisions}) with the
 * fallback of {@code mode}, put together as {@link RateLimiter} does, for tests of the guard alone.
 */
record RateGuard(StoreResilience<List<Limit>, Decision> guard, LocalLimiter local) {

    static RateGuard of(RateLimitStore store, FailureMode mode, Duration timeout, String policies) {
        LimiterSettings settings = new LimiterSettings(store, mode, timeout, false, null, CompletionExecutor.EXECUTOR,
                1.0);
        ShadowAndListener shadowAndListener = new ShadowAndListener(false, null, policies);
        LocalLimiter local = mode == FailureMode.LOCAL ? new LocalLimiter(1.0) : null;
        return new RateGuard(new StoreResilience<>(new StoreDecisions(settings, policies, shadowAndListener),
                StoreResilience.failing(mode, local), settings, "policies " + policies, shadowAndListener), local);
    }

    Decision await(String caller, List<Limit> request, long started) {
        return guard.await(caller, request, started);
    }

    Decision ask(String caller, List<Limit> request, long started, Consumer<Decision> later) {
        return guard.ask(caller, request, started, later);
    }

    long failures() {
        return guard.failures();
    }

    boolean circuitOpen() {
        return guard.circuitOpen();
    }

    boolean holdsLocalState() {
        return local != null && local.holdsState();
    }
}
