package dev.sluice.spi;

import dev.sluice.Decision;
import dev.sluice.Limit;
import java.util.List;

/**
 * A {@link RateLimitStore} that decides on the calling thread and never waits on anything: the
 * in-memory store. A {@link dev.sluice.RateLimiter} on such a store calls {@link #decideNow} instead of
 * {@link #decide(String, List)}, so a decision costs no future, no deadline and no timer: a store
 * that cannot be late needs no timeout. The circuit breaker and the failure mode still apply: an
 * exception thrown by {@link #decideNow} is a store failure, as a failed stage is.
 *
 * <p>Implement it only if {@link #decideNow} never blocks on I/O or on another thread for longer
 * than a lock held for a few computations; {@link #decide(String, List)} must give the same
 * decisions, completed.
 *
 * <p>Audience: store authors.
 */
public interface ImmediateStore extends RateLimitStore {

    /**
     * Decides one request of {@code caller} against {@code limits} on this thread, as
     * {@link #decide(String, List)} does.
     *
     * @return an {@link Decision.Outcome#ALLOWED} or {@link Decision.Outcome#REJECTED} decision
     *         whose quotas follow {@code limits}' order
     */
    Decision decideNow(String caller, List<Limit> limits);
}
