package dev.sluice;

/**
 * Hears every decision a {@link RateLimiter} or a {@link ConcurrencyLimiter} makes, for metrics,
 * and the events around them (the default methods, which do nothing). Called on the deciding
 * thread (or the store's completion thread), so it must be fast and must not throw; an exception
 * it throws is swallowed.
 *
 * <pre>{@code
 * RateLimiter.builder().limit(limit).listener(MicrometerMetrics.of(registry, "search")).build();
 * }</pre>
 *
 * @see dev.sluice.metrics.MicrometerMetrics
 */
@FunctionalInterface
public interface DecisionListener {

    /**
     * One decision.
     *
     * @param decision     what was decided
     * @param elapsedNanos how long deciding took, including any wait on the store
     */
    void onDecision(Decision decision, long elapsedNanos);

    /**
     * The store could not make a decision: called once for each decision made without it (any
     * failure mode), before {@link #onDecision}, with why.
     */
    default void onStoreError(StoreError error) {
    }

    /**
     * A refund of one request ({@link RateLimiter#refund}) ended.
     *
     * @param confirmed whether the store confirmed it in time; if not, the request stays charged
     */
    default void onRefund(boolean confirmed) {
    }

    /** The circuit breaker on the limiter's store changed state: called once per change. */
    default void onCircuit(CircuitState state) {
    }

    /**
     * A {@link ConcurrencyLimiter}'s lease was taken (one more in flight in this instance) or
     * returned (one fewer); a refused lease is neither.
     */
    default void onLease(boolean taken) {
    }

    /**
     * The store repeated a recent rejection from this JVM's copy, without a round trip (the Redis
     * store's local rejections); called before {@link #onDecision} hears the rejection.
     */
    default void onLocalRejection() {
    }
}
