package dev.sluice.internal;

/**
 * A store's answer that it cannot decide one caller because that caller's state is unreadable (a
 * Redis key holding another type, written by something else in the namespace). The store itself
 * answered: the limiter decides that request by its failure mode and counts it as a store
 * failure, but not toward the circuit breaker, which would otherwise fail every other caller
 * without asking the store. Not API.
 */
public final class UnreadableStateException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what could not be read, with the store's own message
     * @param cause   the store's error
     */
    public UnreadableStateException(String message, Throwable cause) {
        super(message, cause);
    }
}
