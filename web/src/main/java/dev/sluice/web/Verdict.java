package dev.sluice.web;

import dev.sluice.Decision;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;

/**
 * What {@link HttpLimiter#check} decided for one request: the {@link Answer} to render, the
 * decision that refused it (for an adapter that throws instead of rendering, such as JAX-RS's
 * {@code reject=exception}) and what is left to do when the response ends.
 *
 * <p>A request that proceeds may leave work for the end of its response: a concurrency lease to
 * return, a {@code charge=after} refund to decide. When {@link #awaitsEnd()}, the adapter calls
 * {@link #responseEnded} once the response is complete (or has failed), with the status the client
 * received: once the status is sent, that status, whatever fails afterwards; a failure before that
 * counts as 500. It may call it from any thread and more than once: the work runs once. It waits
 * at most the limiter's timeout for the store.
 *
 * <p>The request attributes of {@link RequestAttributes} are set on the {@link RequestView} before
 * the verdict is given. Immutable but for the end, thread-safe.
 */
public final class Verdict {

    private final Answer answer;
    private final Decision decision;
    /** The end's work, run once, or {@code null}: nothing awaits the end. */
    private final IntConsumer end;
    private final AtomicBoolean ended = new AtomicBoolean();

    /**
     * A verdict.
     *
     * @param answer   what to render
     * @param decision the decision that refused the request; {@code null} when it proceeds
     * @param end      what to do with the response's final status, run once; {@code null}: nothing
     * @throws IllegalArgumentException if a refusal carries no decision or awaits the end, or a
     *                                  request that proceeds carries one
     */
    public Verdict(Answer answer, Decision decision, IntConsumer end) {
        this.answer = Objects.requireNonNull(answer, "answer");
        if (answer.proceeds() == (decision != null)) {
            throw new IllegalArgumentException("'decision' must be given exactly for a refusal, got status "
                    + answer.status());
        }
        if (!answer.proceeds() && end != null) {
            throw new IllegalArgumentException("a refusal awaits no end, got status " + answer.status());
        }
        this.decision = decision;
        this.end = end;
    }

    /** What to render: the headers, and unless the request proceeds, the status and body. */
    public Answer answer() {
        return answer;
    }

    /** Whether the request proceeds to the application; {@code answer().proceeds()}. */
    public boolean proceeds() {
        return answer.proceeds();
    }

    /** The decision that refused the request; {@code null} when it proceeds. */
    public Decision decision() {
        return decision;
    }

    /** Whether the adapter must call {@link #responseEnded} when the response is complete. */
    public boolean awaitsEnd() {
        return end != null;
    }

    /**
     * The response is complete with {@code status} (the status sent, or 500 for a failure before
     * any was): returns a lease, refunds a request whose status is not charged. Does nothing when
     * nothing {@link #awaitsEnd() awaits} the end.
     */
    public void responseEnded(int status) {
        if (end != null && ended.compareAndSet(false, true)) {
            end.accept(status);
        }
    }

    @Override
    public String toString() {
        return "Verdict[status " + answer.status() + (end != null ? ", awaits end" : "") + "]";
    }
}
