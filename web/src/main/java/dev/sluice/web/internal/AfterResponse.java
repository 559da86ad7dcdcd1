package dev.sluice.web.internal;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a {@link Guard} still has to do once the response of a request it let through is complete:
 * return a concurrency lease, and for {@code charge=after} refund the request unless its status is
 * charged. The adapter calls {@link #complete} when the response is complete (or has failed) with
 * the status the client received: once the status is sent, that status, whatever fails afterwards;
 * a failure before that counts as 500. It calls it on whatever thread sees the end; the guard's
 * after-response work runs at most once, so an adapter may report the end from several places.
 * {@link #NONE} needs no call.
 */
@FunctionalInterface
public interface AfterResponse {

    /** Nothing to do: the route neither holds a lease nor charges after the response. */
    AfterResponse NONE = status -> { };

    /**
     * The response is complete with {@code status} (the status sent, or 500 for a failure before
     * any was); waits at most the limiters' timeout for the store.
     */
    void complete(int status);

    /** {@code work}, run at most once however often it is called. */
    static AfterResponse once(AfterResponse work) {
        AtomicBoolean done = new AtomicBoolean();
        return status -> {
            if (done.compareAndSet(false, true)) {
                work.complete(status);
            }
        };
    }
}
