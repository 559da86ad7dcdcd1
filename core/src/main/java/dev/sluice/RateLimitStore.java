package dev.sluice;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Where the counting state lives: the service provider interface behind {@link RateLimiter}.
 *
 * <p>Sluice ships two: {@link dev.sluice.memory.MemoryStore} (one JVM) and
 * {@link dev.sluice.redis.RedisStore} (many JVMs sharing one Redis, one atomic script per
 * decision). Both give identical decisions for identical inputs; the conformance suite holds them
 * to it. An implementation must:
 *
 * <ul>
 *   <li>decide all limits together, atomically: consume each limit's {@link Limit#cost()} from
 *       every limit, or, if any limit lacks it, consume nothing from any;
 *   <li>never let stored time move backwards, and bound the memory a caller can hold;
 *   <li>complete the stage exceptionally when it cannot decide (the limiter then applies its
 *       {@link FailureMode}), never with a made-up decision.
 * </ul>
 *
 * <p>The limiter only passes limits whose cost fits their {@linkplain Limit#capacity() capacity},
 * and a caller identity it has not altered; the store derives bounded keys from it. Implementations
 * are thread-safe.
 */
public interface RateLimitStore extends AutoCloseable {

    /**
     * Decides one request of {@code caller} against {@code limits}.
     *
     * @param caller the caller's identity, e.g. an API key or a client address; any string
     * @param limits the limits, non-empty, with distinct policies
     * @return a stage completed with an {@link Decision.Outcome#ALLOWED} or
     *         {@link Decision.Outcome#REJECTED} decision whose quotas follow {@code limits}' order
     */
    CompletionStage<Decision> decide(String caller, List<Limit> limits);

    /** Releases what this store owns (connections, threads); decisions after this fail. */
    @Override
    void close();
}
