package dev.sluice;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One request's place under a {@link ConcurrencyLimiter}: taken by
 * {@link ConcurrencyLimiter#acquire}, returned by {@link #release()} (or {@link #close()}) when the
 * request completes. A lease whose {@link #decision()} is not {@link Decision.Outcome#ALLOWED}
 * holds nothing, and releasing it does nothing. Releasing twice releases once. Thread-safe.
 */
public final class Lease implements AutoCloseable {

    private final ConcurrencyLimiter limiter;
    private final String caller;
    private final String id;
    private final Decision decision;
    private final AtomicBoolean held;

    Lease(ConcurrencyLimiter limiter, String caller, String id, Decision decision) {
        this.limiter = limiter;
        this.caller = caller;
        this.id = id;
        this.decision = decision;
        this.held = new AtomicBoolean(decision.outcome() == Decision.Outcome.ALLOWED);
    }

    /** How taking the lease was decided: whether the request may proceed, and the leases left. */
    public Decision decision() {
        return decision;
    }

    /** Whether this lease still holds a place (taken and not yet released). */
    public boolean held() {
        return held.get();
    }

    /** Returns the place, once; waits at most the limiter's timeout, after which the lease expires on its own. */
    public void release() {
        if (held.compareAndSet(true, false)) {
            limiter.returned(caller, id);
        }
    }

    /** {@link #release()}. */
    @Override
    public void close() {
        release();
    }

    @Override
    public String toString() {
        return "Lease[" + id + ", " + decision.outcome() + (held() ? ", held" : "") + "]";
    }
}
