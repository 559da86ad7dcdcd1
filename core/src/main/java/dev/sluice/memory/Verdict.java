package dev.sluice.memory;

/**
 * What one limit says about one request at one instant, in microseconds relative to that instant.
 * Mutable and reused within one decision; never shared between threads.
 */
final class Verdict {
    boolean fits;
    long remaining;
    long resetMicros;
    long retryMicros;
    /** Until the limit grants one unit more than {@link #remaining}; 0 when it is whole (nothing to come). */
    long nextMicros;
    /** How long the state stays meaningful; after that it equals an absent state. */
    long ttlMicros;
    /**
     * Until the slot the request counts in begins, when that is later than the instant decided: a
     * bucket written ahead of it, a window booked ahead. A reservation ({@code acquire}) must not
     * start before it; 0 otherwise.
     */
    long fromMicros;

    void set(boolean fits, long remaining, long resetMicros, long retryMicros, long ttlMicros, long nextMicros) {
        this.nextMicros = nextMicros;
        this.fits = fits;
        this.remaining = remaining;
        this.resetMicros = resetMicros;
        this.retryMicros = retryMicros;
        this.ttlMicros = ttlMicros;
    }
}
