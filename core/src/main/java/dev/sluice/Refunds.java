package dev.sluice;

import dev.sluice.internal.Timeouts;
import dev.sluice.spi.RateLimitStore;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * A limiter's refunds ({@code charge=after}) and returns of reservations given up by their
 * waiters: one store call, waited for at most the timeout. A refund that fails is not retried:
 * the request stays charged, as a counted one would be, so a store outage errs toward limiting
 * (a reservation's slot passes unused). Failures are logged at most every ten seconds.
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
        return confirm(() -> store.refund(caller, limits), "refund a request", "it stays charged");
    }

    /**
     * Returns a reservation its waiter gave up ({@link RateLimitStore#giveBack}), waiting at most
     * the timeout; whether the store confirmed it in time.
     */
    boolean giveBack(String caller, List<Limit> limits, RateLimitStore.Booking booking) {
        return confirm(() -> store.giveBack(caller, limits, booking), "give back a reservation",
                "its slot passes unused");
    }

    /**
     * As {@link #giveBack} without waiting for the store: for a reservation given up on a thread
     * that must not block (a cancelled stage's).
     */
    void giveBackLater(String caller, List<Limit> limits, RateLimitStore.Booking booking) {
        CompletableFuture<Void> sent;
        try {
            sent = store.giveBack(caller, limits, booking).toCompletableFuture();
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        Timeouts.orTimeout(sent, timeout.toNanos()).whenComplete((done, failure) -> {
            if (failure == null) {
                shadowAndListener.refund(true);
                return;
            }
            failed("give back a reservation", "its slot passes unused", failure);
        });
    }

    private boolean confirm(Supplier<CompletionStage<Void>> call, String what, String otherwise) {
        Throwable failure;
        try {
            call.get().toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
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
        failed(what, otherwise, failure);
        return false;
    }

    private void failed(String what, String otherwise, Throwable failure) {
        log.warn("Rate-limit store could not {} within {} ms for policies {}; {}: {}", what, timeout.toMillis(),
                policies, otherwise, String.valueOf(failure));
        shadowAndListener.refund(false);
    }
}
