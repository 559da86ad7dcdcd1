package dev.sluice.redis;

/**
 * Redis could not be reached yet: a request of a store that is not ready (see
 * {@link RedisConnection}). Its name says "connection", which is how the limiter files it
 * ({@code StoreError.CONNECTION}) whichever client the store runs on.
 */
final class RedisConnectionException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    RedisConnectionException(String message) {
        super(message);
    }
}
