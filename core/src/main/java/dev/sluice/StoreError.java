package dev.sluice;

import dev.sluice.internal.UnreadableStateException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

/**
 * Why the store could not make a decision, as {@link DecisionListener#onStoreError} hears it and
 * metrics tag it ({@link #tag()}, OpenTelemetry's {@code error.type}).
 */
public enum StoreError {
    /** The store did not answer within the limiter's timeout (or its client's own timeout expired). */
    TIMEOUT,
    /** The circuit breaker is open: the store was not asked. */
    CIRCUIT_OPEN,
    /** The store could not be reached: refused, reset or closed connections. */
    CONNECTION,
    /** The store's script failed (a Lua error in Redis). */
    SCRIPT,
    /** The store answered, but could not read this caller's state (a key of another type). */
    UNREADABLE_STATE,
    /** Anything else. */
    OTHER;

    /** How many causes {@link #of} looks through: a wrapper of a wrapper, not a cycle. */
    private static final int DEPTH = 8;

    private final String tag = name().toLowerCase(Locale.ROOT);

    /** The lower-case name, as a metric's {@code error.type} tag: {@code timeout}, {@code circuit_open}... */
    public String tag() {
        return tag;
    }

    /**
     * Classifies a store's failure by its type and its causes', since Sluice depends on no client:
     * a {@link TimeoutException} or a type named {@code *Timeout*}; an {@link IOException} or a
     * type named {@code *Connection*} (Redisson's, Lettuce's and Jedis's connection errors); an
     * error whose message names a script ({@code ERR user_script:1: ...}, {@code Error running
     * script}, {@code decide.lua: ...}); {@link UnreadableStateException}.
     */
    static StoreError of(Throwable failure) {
        Throwable cause = failure;
        for (int i = 0; cause != null && i < DEPTH; i++, cause = cause.getCause()) {
            StoreError kind = ofOne(cause);
            if (kind != OTHER) {
                return kind;
            }
        }
        return OTHER;
    }

    private static StoreError ofOne(Throwable t) {
        if (t instanceof UnreadableStateException) {
            return UNREADABLE_STATE;
        }
        String type = t.getClass().getSimpleName();
        if (t instanceof TimeoutException || type.contains("Timeout")) {
            return TIMEOUT;
        }
        if (t instanceof IOException || t instanceof UncheckedIOException || type.contains("Connection")) {
            return CONNECTION;
        }
        String message = t.getMessage();
        if (message != null) {
            String lower = message.toLowerCase(Locale.ROOT);
            if (lower.contains("script") || lower.contains(".lua")) {
                return SCRIPT;
            }
        }
        return OTHER;
    }
}
