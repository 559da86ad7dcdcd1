package dev.sluice;

import java.util.Locale;

/**
 * What a decision does when the store fails or does not answer within the timeout.
 *
 * <p>{@link #OPEN} (the default) lets the request through, logs and counts it: a cache outage
 * should not become an outage of the API. {@link #CLOSED} rejects it (HTTP 503): for routes where
 * an unmetered flood is worse than a brief refusal, such as payments or expensive inference.
 * {@link #LOCAL} keeps limiting in this JVM alone: an application that an attacker can make slow
 * (so that decisions time out) does not turn its limits off.
 */
public enum FailureMode {
    /** Allow the request when the store cannot decide. */
    OPEN,
    /** Refuse the request when the store cannot decide. */
    CLOSED,
    /**
     * Decide the request in this JVM when the store cannot: an in-memory limiter with the same
     * limits, each limit's count and burst scaled by the limiter's local share
     * ({@link RateLimiter.Builder#localShare(double)}), answers {@link Decision.Outcome#LOCAL_ALLOWED}
     * or {@link Decision.Outcome#LOCAL_REJECTED} until the store answers again.
     */
    LOCAL;

    /** The configuration name: {@code open}, {@code closed} or {@code local}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Reads {@code open}, {@code closed} or {@code local} (any case).
     *
     * @throws IllegalArgumentException naming the value
     */
    public static FailureMode fromConfigName(String value) {
        if (value != null) {
            String normal = value.trim().toLowerCase(Locale.ROOT);
            for (FailureMode mode : values()) {
                if (mode.configName().equals(normal)) {
                    return mode;
                }
            }
        }
        throw new IllegalArgumentException("'failure-mode' must be open, closed or local, got '" + value + "'");
    }
}
