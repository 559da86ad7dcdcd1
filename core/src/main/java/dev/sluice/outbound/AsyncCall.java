package dev.sluice.outbound;

import dev.sluice.Lease;

import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * One call of {@link RateLimitedHttpClient#sendAsync}: a place in flight (with a cap), then a
 * permit, then the exchange, completing the caller's {@code response}. Until the request is handed
 * to the client, any completion of that stage (cancelled, {@code orTimeout},
 * {@code completeOnTimeout}, the caller completing it, or a failure of the place or the permit)
 * gives the call up: it is never sent, the permit's reservation (or the wait for it) and the place
 * are given back. Once handed over, a cancellation reaches the exchange, and the place is released
 * when the exchange ends, whoever completed the stage.
 */
final class AsyncCall<T> {
    private final Permits permits;
    private final String key;
    private final Priority priority;
    private final Supplier<CompletableFuture<HttpResponse<T>>> send;
    private final CompletableFuture<HttpResponse<T>> response = new CompletableFuture<>();
    // guarded by this: the hand-over and the giving up decide once which of them came first
    private CompletableFuture<?> waiting;
    private Lease place;
    private boolean handedOver;
    private boolean givenUp;
    private CompletableFuture<HttpResponse<T>> exchange;

    AsyncCall(Permits permits, String key, Priority priority, Supplier<CompletableFuture<HttpResponse<T>>> send) {
        this.permits = permits;
        this.key = key;
        this.priority = priority;
        this.send = send;
    }

    CompletableFuture<HttpResponse<T>> start() {
        response.whenComplete((value, failure) -> ended());
        if (permits.maxInFlight() == 0) {
            acquire();
        } else {
            waitOn(permits.enterAsync(key)).whenComplete((lease, failure) -> {
                if (failure != null) {
                    fail(failure);
                } else {
                    entered(lease);
                }
            });
        }
        return response;
    }

    /** {@code stage}, cancelled at once if the call was given up, else the one a give-up cancels. */
    private <S> CompletableFuture<S> waitOn(CompletableFuture<S> stage) {
        boolean cancel;
        synchronized (this) {
            cancel = givenUp;
            waiting = stage;
        }
        if (cancel) {
            stage.cancel(false);
        }
        return stage;
    }

    private void entered(Lease lease) {
        boolean keep;
        synchronized (this) {
            keep = !givenUp;
            place = lease;
        }
        if (!keep) {
            lease.release();
            return;
        }
        acquire();
    }

    private void acquire() {
        waitOn(permits.acquireAsync(key, priority)).whenComplete((decision, failure) -> {
            if (failure != null) {
                fail(failure);
            } else {
                handOver();
            }
        });
    }

    /** Sends, unless the caller's stage was completed first: then the request never goes. */
    private void handOver() {
        synchronized (this) {
            if (givenUp || response.isDone()) {
                return;   // ended() gives the place back (the slot has come: it passes unused)
            }
            handedOver = true;
        }
        CompletableFuture<HttpResponse<T>> sent;
        try {
            sent = send.get();
        } catch (RuntimeException e) {
            releasePlace();
            response.completeExceptionally(e);
            return;
        }
        synchronized (this) {
            exchange = sent;
        }
        if (response.isCancelled()) {
            sent.cancel(false);   // cancelled between the hand-over and here
        }
        sent.whenComplete((answer, failure) -> {
            releasePlace();
            if (failure != null) {
                fail(failure);
                return;
            }
            permits.learnAsync(key, answer.statusCode(), RateLimitedHttpClient.headers(answer))
                    .whenComplete((pause, never) -> response.complete(answer));
        });
    }

    /** The caller's stage completed, by this call or by anyone else. */
    private void ended() {
        boolean gaveUp;
        CompletableFuture<?> waited;
        CompletableFuture<HttpResponse<T>> sent;
        synchronized (this) {
            givenUp = !handedOver;
            gaveUp = givenUp;
            waited = waiting;
            sent = exchange;
        }
        if (!gaveUp) {
            if (sent != null && response.isCancelled()) {
                sent.cancel(false);
            }
            return;
        }
        if (waited != null) {
            waited.cancel(false);   // stops the wait for the place, or gives the reservation back
        }
        releasePlace();
    }

    private void releasePlace() {
        Lease held;
        synchronized (this) {
            held = place;
        }
        if (held != null) {
            held.release();   // releasing twice releases once
        }
    }

    private void fail(Throwable failure) {
        response.completeExceptionally(failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure);
    }
}
