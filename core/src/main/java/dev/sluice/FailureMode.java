package dev.sluice;

import java.util.Locale;

/**
 * What a decision does when the store fails or does not answer within the timeout.
 *
 * <p>{@link #OPEN} (the default) lets the request through, logs and counts it: a cache outage
 * should not become an outage of the API. {@link #CLOSED} rejects it (HTTP 503): for routes where
 * an unmetered flood is worse than a brief refusal, such as payments or expensive inference.
 */
public enum FailureMode {
    /** Allow the request when the store cannot decide. */
    OPEN,
    /** Refuse the request when the store cannot decide. */
    CLOSED;

    /** The configuration name, {@code open} or {@code closed}. */
    public String configName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Reads {@code open} or {@code closed} (any case).
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
        throw new IllegalArgumentException("'failure-mode' must be open or closed, got '" + value + "'");
    }
}
