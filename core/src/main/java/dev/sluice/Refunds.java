package dev.sluice;

import dev.sluice.internal.Timeouts;
import dev.sluice.spi.RateLimitStore;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A limiter's refunds ({@code charge=after}): one store call, waited for at most the timeout. A
 * refund that fails is not retried: the request stays charged, as a counted one would be, so a
 * store outage errs toward limiting. Failures are logged at most every ten seconds.
 */
final class Refunds {

    private final RateLimitStore store;
    private final Duration timeout;
    private final String policies;
    private final ShadowAndListener shadowAndListener;
    private final QuietLog log = new QuietLog();

    Refunds(RateLimitStore store, Duration timeout, String policies, ShadowAndListener shadowAndListener) {
        this.shadowAndListener = shadowAndListener;
        this.store = store;
        this.timeout = timeout;
        this.policies = policies;
    }

    /** Refunds one request of {@code caller} under {@code limits}; whether the store confirmed it in time. */
    boolean refund(String caller, List<Limit> limits) {
        Throwable failure;
        try {
            store.refund(caller, limits).toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            shadowAndListener.refund(true);
            return true;
        } catch (ExecutionException e) {
            failure = e.getCause();
        } catch (TimeoutException | RuntimeException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = e;
        }
        log.warn("Rate-limit store could not refund a request within {} ms for policies {}; it stays charged: {}",
                timeout.toMillis(), policies, String.valueOf(failure));
        shadowAndListener.refund(false);
        return false;
    }

    /**
     * Refunds as {@link #refund} does without waiting for the store: for a reservation given up
     * on a thread that must not block (a cancelled stage's).
     */
    void refundLater(String caller, List<Limit> limits) {
        CompletableFuture<Void> sent;
        try {
            sent = store.refund(caller, limits).toCompletableFuture();
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        Timeouts.orTimeout(sent, timeout.toNanos()).whenComplete((done, failure) -> {
            if (failure == null) {
                shadowAndListener.refund(true);
                return;
            }
            log.warn("Rate-limit store could not refund a request within {} ms for policies {}; it stays charged: {}",
                    timeout.toMillis(), policies, String.valueOf(failure));
            shadowAndListener.refund(false);
        });
    }
}
