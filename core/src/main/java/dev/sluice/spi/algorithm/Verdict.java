package dev.sluice.spi.algorithm;

/**
 * What one limit says about one request at one instant, as a {@link RateAlgorithm} writes it: the
 * durations in microseconds relative to that instant.
 *
 * <p>Mutable, so that a store deciding many requests reuses one per limit and a decision allocates
 * nothing; not thread-safe: one thread fills and reads it.
 */
public final class Verdict {
    boolean fits;
    long remaining;
    long resetMicros;
    long retryMicros;
    long nextMicros;
    long ttlMicros;
    long fromMicros;

    /** An empty verdict, to be filled by {@link RateAlgorithm#evaluate}. */
    public Verdict() {
    }

    void set(boolean fits, long remaining, long resetMicros, long retryMicros, long ttlMicros, long nextMicros) {
        this.nextMicros = nextMicros;
        this.fits = fits;
        this.remaining = remaining;
        this.resetMicros = resetMicros;
        this.retryMicros = retryMicros;
        this.ttlMicros = ttlMicros;
    }

    /** Whether the cost fits. */
    public boolean fits() {
        return fits;
    }

    /** Whole units left after the decision. */
    public long remaining() {
        return remaining;
    }

    /** Until the budget is whole again (for windows: until the current window ends). */
    public long resetMicros() {
        return resetMicros;
    }

    /** Until a request of this cost could fit; 0 when it fits. */
    public long retryMicros() {
        return retryMicros;
    }

    /** Until the limit grants one unit more than {@link #remaining()}; 0 when it is whole. */
    public long nextMicros() {
        return nextMicros;
    }

    /** How long the state stays meaningful; after that it equals an absent state (a key's TTL). */
    public long ttlMicros() {
        return ttlMicros;
    }

    /**
     * Until the slot the request counts in begins, when that is later than the instant decided: a
     * bucket written ahead of it, a window booked ahead. A reservation must not start before it.
     */
    public long fromMicros() {
        return fromMicros;
    }
}
