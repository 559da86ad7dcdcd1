package dev.sluice.outbound;

import dev.sluice.Decision;

import java.time.Duration;

/**
 * No permit for an outbound call: none was free within the longest wait
 * ({@link Decision.Outcome#REJECTED}), the cost can never be granted
 * ({@link Decision.Outcome#UNSATISFIABLE}), or the store failed under {@code FailureMode.CLOSED}
 * or the local share was spent ({@link Decision.Outcome#FAILED_CLOSED},
 * {@link Decision.Outcome#LOCAL_REJECTED}). The call was not sent and nothing was spent; but for
 * a call whose every slot came back later than {@link Permits#maxLateness()} until its wait ran
 * out (a {@link Decision.Outcome#REJECTED} decision, retry-after zero): those slots passed unused.
 */
public final class PermitUnavailableException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Decision decision;

    PermitUnavailableException(String key, Duration maxWait, Decision decision) {
        this(message(key, maxWait, decision), decision);
    }

    private PermitUnavailableException(String message, Decision decision) {
        super(message);
        this.decision = decision;
    }

    /** Every slot of {@code key}'s call came back too late to send, the last {@code late} after it. */
    static PermitUnavailableException late(String key, Decision last, Duration late, Duration maxLateness) {
        return new PermitUnavailableException("no permit for '" + key + "' on time within the wait: its last slot "
                + "came back " + late.toMillis() + " ms after it, more than the " + maxLateness.toMillis()
                + " ms allowed (a slow store round trip, a thread woken late); the slots passed unused",
                new Decision(Decision.Outcome.REJECTED, last.quotas(), Duration.ZERO));
    }

    private static String message(String key, Duration maxWait, Decision decision) {
        return switch (decision.outcome()) {
            case FAILED_CLOSED -> "no permit for '" + key
                    + "': the rate-limit store failed and the failure mode is closed";
            case UNSATISFIABLE -> "no permit for '" + key + "': the cost exceeds what the limit can ever grant";
            default -> "no permit for '" + key + "' within " + maxWait.toMillis() + " ms (" + decision.outcome()
                    + "; the next would come in " + decision.retryAfter().toMillis() + " ms)";
        };
    }

    /** The limiter's decision: why no permit was granted, and when one could be. */
    public Decision decision() {
        return decision;
    }

    /** When a permit could next be granted: the decision's retry-after. */
    public Duration retryAfter() {
        return decision.retryAfter();
    }
}
