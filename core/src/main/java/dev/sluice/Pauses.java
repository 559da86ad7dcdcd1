package dev.sluice;

import dev.sluice.internal.Timeouts;
import dev.sluice.spi.RateLimitStore;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A limiter's pauses ({@link RateLimiter#pause}): one store call, waited for at most the timeout,
 * and the same pause in the local limiter of {@link FailureMode#LOCAL}, so that it holds while
 * the store is down too. A pause the store did not confirm is not retried: the provider's next
 * refusal asks again. Failures are logged at most every ten seconds.
 */
final class Pauses {

    private final RateLimitStore store;
    private final LocalLimiter local;
    private final Duration timeout;
    private final String policies;
    private final QuietLog log = new QuietLog();

    Pauses(RateLimitStore store, LocalLimiter local, Duration timeout, String policies) {
        this.store = store;
        this.local = local;
        this.timeout = timeout;
        this.policies = policies;
    }

    /**
     * Pauses {@code caller} under {@code limits}; a stage completed with whether the store confirmed it in time, never
     * failing.
     */
    CompletableFuture<Boolean> pause(String caller, List<Limit> limits, Duration pause) {
        long micros = RateLimitStore.checkPause(pause);
        if (local != null) {
            local.pause(caller, limits, pause);
        }
        CompletableFuture<Void> sent;
        try {
            sent = store.pause(caller, limits, pause).toCompletableFuture();
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        return Timeouts.orTimeout(sent, timeout.toNanos()).handle((done, failure) -> {
            if (failure == null) {
                return true;
            }
            log.warn("Rate-limit store could not record a pause of {} ms within {} ms for policies {}: {}",
                    micros / 1_000, timeout.toMillis(), policies, String.valueOf(failure));
            return false;
        });
    }
}
