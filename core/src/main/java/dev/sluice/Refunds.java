package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import java.time.Duration;
import java.util.List;
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
    private final Announcer announcer;
    private final QuietLog log = new QuietLog();

    Refunds(RateLimitStore store, Duration timeout, String policies, Announcer announcer) {
        this.announcer = announcer;
        this.store = store;
        this.timeout = timeout;
        this.policies = policies;
    }

    /** Refunds one request of {@code caller} under {@code limits}; whether the store confirmed it in time. */
    boolean refund(String caller, List<Limit> limits) {
        Throwable failure;
        try {
            store.refund(caller, limits).toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            announcer.refund(true);
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
        announcer.refund(false);
        return false;
    }
}
