package dev.sluice;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The answer to "may this caller spend its cost now?": one immutable value carrying the outcome
 * and, for every limit decided, the caller's budget.
 *
 * <p>A rejection is a {@code Decision}, not an exception, and a rejected request consumed nothing
 * from any limit. When several limits are decided together, {@link #capacity()},
 * {@link #remaining()} and {@link #reset()} describe the <em>binding</em> one: the limit that
 * rejected the request (the one with the longest wait), or, when allowed, the one with the least
 * remaining; {@link #retryAfter()} is the wait until every limit could admit the request.
 *
 * <pre>{@code
 * Decision d = limiter.decide("user-42");
 * if (!d.allowed()) {
 *     respond(429, "Retry-After", d.retryAfter().toSeconds() + 1);
 * }
 * }</pre>
 *
 * @param outcome    what happened
 * @param quotas     one entry per limit, in the limiter's order; empty when the store failed (but for a
 *                   local decision, which carries the local limiter's quotas)
 * @param retryAfter when a request of this cost could next be allowed: zero when allowed; for
 *                   {@link Outcome#FAILED_CLOSED}, a short suggested back-off
 */
public record Decision(Outcome outcome, List<Quota> quotas, Duration retryAfter) {

    /** How a decision came about. */
    public enum Outcome {
        /** Every limit admitted the request, and its cost was consumed from each. */
        ALLOWED,
        /** At least one limit had too little left; nothing was consumed. */
        REJECTED,
        /**
         * Shadow mode: the request would have been rejected (or was unsatisfiable) but is let
         * through; nothing was consumed. Counted and logged so a limit can be tried out safely.
         */
        SHADOW_REJECTED,
        /** The cost exceeds what some limit can ever grant; it would never be allowed. */
        UNSATISFIABLE,
        /** The store failed or timed out and the failure mode is {@link FailureMode#OPEN}. */
        FAILED_OPEN,
        /** The store failed or timed out and the failure mode is {@link FailureMode#CLOSED}. */
        FAILED_CLOSED,
        /**
         * The store failed or timed out, the failure mode is {@link FailureMode#LOCAL}, and this
         * JVM's local limiter admitted the request: its cost was consumed from the local budgets,
         * whose scaled limits the quotas carry.
         */
        LOCAL_ALLOWED,
        /**
         * The store failed or timed out, the failure mode is {@link FailureMode#LOCAL}, and this
         * JVM's local limiter refused the request: nothing was consumed; answered like
         * {@link #REJECTED} (HTTP 429 with {@code Retry-After}).
         */
        LOCAL_REJECTED
    }

    /**
     * A caller's budget under one limit, as of this decision.
     *
     * @param limit      the limit
     * @param allowed    whether this limit alone would admit the request
     * @param remaining  units left now (after this request's cost, if the decision allowed it)
     * @param reset      time until the budget is fully restored; for the window algorithms, until
     *                   the current window ends
     * @param retryAfter time until this limit could admit a request of this cost; zero if it can now
     * @param nextUnit   time until this limit grants one unit more than {@code remaining}: the next
     *                   token of a bucket, the end of a fixed window, the expiry of a sliding log's
     *                   oldest entry, the decay of a sliding window's estimate by one; zero when the
     *                   budget is whole (nothing more is to come). For a request of cost 1 that this
     *                   limit refused, it equals {@code retryAfter}.
     */
    public record Quota(Limit limit, boolean allowed, long remaining, Duration reset, Duration retryAfter,
                        Duration nextUnit) {
        /** Validates the components. */
        public Quota {
            Objects.requireNonNull(limit, "limit");
            Objects.requireNonNull(reset, "reset");
            Objects.requireNonNull(retryAfter, "retryAfter");
            Objects.requireNonNull(nextUnit, "nextUnit");
            if (remaining < 0) {
                throw new IllegalArgumentException("remaining must not be negative, got " + remaining);
            }
        }

        /**
         * A quota whose next unit is not known apart from its reset (as before {@code nextUnit}
         * existed): {@code nextUnit} is taken to be {@code reset}.
         */
        public Quota(Limit limit, boolean allowed, long remaining, Duration reset, Duration retryAfter) {
            this(limit, allowed, remaining, reset, retryAfter, reset);
        }
    }

    /** The {@link #retryAfter()} of an {@link Outcome#UNSATISFIABLE} decision: the longest duration. */
    public static final Duration NEVER = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);

    /** Validates the components and copies the quota list. */
    public Decision {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(retryAfter, "retryAfter");
        quotas = List.copyOf(quotas);
    }

    /**
     * Whether the caller may proceed: {@link Outcome#ALLOWED}, {@link Outcome#SHADOW_REJECTED},
     * {@link Outcome#FAILED_OPEN} or {@link Outcome#LOCAL_ALLOWED}.
     */
    public boolean allowed() {
        return outcome == Outcome.ALLOWED || outcome == Outcome.SHADOW_REJECTED || outcome == Outcome.FAILED_OPEN
                || outcome == Outcome.LOCAL_ALLOWED;
    }

    /** Whether the store failed to decide (any failure mode, the local limiter's decisions included). */
    public boolean storeFailed() {
        return outcome == Outcome.FAILED_OPEN || outcome == Outcome.FAILED_CLOSED || local();
    }

    /** Whether this JVM's local limiter decided, because the store could not ({@link FailureMode#LOCAL}). */
    public boolean local() {
        return outcome == Outcome.LOCAL_ALLOWED || outcome == Outcome.LOCAL_REJECTED;
    }

    /** The binding quota (see the class description), or {@code null} when the store failed. */
    public Quota binding() {
        Quota binding = null;
        for (Quota quota : quotas) {
            if (binding == null) {
                binding = quota;
            } else if (outcome == Outcome.ALLOWED || outcome == Outcome.LOCAL_ALLOWED
                    ? quota.remaining() < binding.remaining()
                    : quota.retryAfter().compareTo(binding.retryAfter()) > 0) {
                binding = quota;
            }
        }
        return binding;
    }

    /**
     * The most the binding limit can grant at once ({@link Limit#capacity()}: the burst of a bucket,
     * the count of a window), which {@link #remaining()} counts down from; 0 when the store failed.
     * The binding limit itself is {@code binding().limit()}.
     */
    public long capacity() {
        Quota binding = binding();
        return binding == null ? 0 : binding.limit().capacity();
    }

    /** Units left under the binding limit, or 0 when the store failed. */
    public long remaining() {
        Quota binding = binding();
        return binding == null ? 0 : binding.remaining();
    }

    /** Time until the binding limit is fully restored, or zero when the store failed. */
    public Duration reset() {
        Quota binding = binding();
        return binding == null ? Duration.ZERO : binding.reset();
    }
}
