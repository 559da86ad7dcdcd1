package dev.sluice;

/**
 * A clock in microseconds since the epoch, injectable so that the algorithms can be tested
 * without sleeping.
 *
 * <p>The in-memory store reads it for every decision. The Redis store ignores it in production,
 * where every script reads the Redis server's {@code TIME} so that application nodes with skewed
 * clocks cannot admit extra requests; tests may hand the Redis store a time source explicitly.
 * Implementations must be thread-safe. They need not be monotonic: the algorithms never let
 * stored time move backwards.
 */
@FunctionalInterface
public interface TimeSource {

    /** The wall clock of this JVM, in microseconds. */
    TimeSource SYSTEM = () -> {
        java.time.Instant now = java.time.Instant.now();
        return Math.addExact(Math.multiplyExact(now.getEpochSecond(), 1_000_000L), now.getNano() / 1_000L);
    };

    /** The current time in microseconds since 1970-01-01T00:00:00Z. */
    long nowMicros();
}
