package dev.sluice;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.LongAdder;

/**
 * The last step of every decision: shadow mode turns a rejection (a local one too) into
 * {@link Decision.Outcome#SHADOW_REJECTED} (counted, logged at most every ten seconds), then the
 * listener hears the result; and the one way to the listener for the events around decisions.
 * Thread-safe; logs under {@link RateLimiter}'s name.
 */
final class ShadowAndListener {

    private static final Logger LOG = LoggerFactory.getLogger(RateLimiter.class);

    private final boolean shadow;
    private final DecisionListener listener;
    /** The limiter's policies, as the shadow log names them. */
    private final String policies;
    private final LongAdder shadowRejections = new LongAdder();
    private final QuietLog shadowLog = new QuietLog();

    ShadowAndListener(boolean shadow, DecisionListener listener, String policies) {
        this.shadow = shadow;
        this.listener = listener;
        this.policies = policies;
    }

    /** Applies shadow mode to {@code decision} and tells the listener; what the caller gets. */
    Decision apply(Decision decision, long started) {
        Decision result = decision;
        Decision.Outcome outcome = decision.outcome();
        // a local limiter's refusal is a refusal too: shadow mode lets it through like any other
        if (shadow && (outcome == Decision.Outcome.REJECTED || outcome == Decision.Outcome.UNSATISFIABLE
                || outcome == Decision.Outcome.LOCAL_REJECTED)) {
            result = new Decision(Decision.Outcome.SHADOW_REJECTED, decision.quotas(), decision.retryAfter());
            shadowRejections.increment();
            if (shadowLog.due()) {
                LOG.info("Shadow mode: policies {} would have rejected a request ({} so far); it was let through",
                        policies, shadowRejections.sum());
            }
        }
        if (listener != null) {
            try {
                listener.onDecision(result, System.nanoTime() - started);
            } catch (RuntimeException e) {
                LOG.debug("A decision listener failed", e);
            }
        }
        return result;
    }

    /** Tells the listener why the store could not decide: once per decision made without it. */
    void storeError(StoreError error) {
        if (listener != null) {
            try {
                listener.onStoreError(error);
            } catch (RuntimeException e) {
                LOG.debug("A decision listener failed", e);
            }
        }
    }

    /** Tells the listener that a refund ended, confirmed or not. */
    void refund(boolean confirmed) {
        if (listener != null) {
            try {
                listener.onRefund(confirmed);
            } catch (RuntimeException e) {
                LOG.debug("A decision listener failed", e);
            }
        }
    }

    /** Tells the listener that the circuit breaker changed state. */
    void circuit(CircuitState state) {
        if (listener != null) {
            try {
                listener.onCircuit(state);
            } catch (RuntimeException e) {
                LOG.debug("A decision listener failed", e);
            }
        }
    }

    /** Tells the listener that a lease was taken or returned. */
    void lease(boolean taken) {
        if (listener != null) {
            try {
                listener.onLease(taken);
            } catch (RuntimeException e) {
                LOG.debug("A decision listener failed", e);
            }
        }
    }

    /** Tells the listener that a rejection was repeated from the local copy. */
    void localRejection() {
        if (listener != null) {
            try {
                listener.onLocalRejection();
            } catch (RuntimeException e) {
                LOG.debug("A decision listener failed", e);
            }
        }
    }

    boolean shadow() {
        return shadow;
    }

    long shadowRejections() {
        return shadowRejections.sum();
    }
}
