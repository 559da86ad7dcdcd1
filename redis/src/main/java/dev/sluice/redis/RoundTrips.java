package dev.sluice.redis;

/**
 * How long a call takes, as TCP estimates a round trip (RFC 6298): a smoothed mean plus four
 * mean deviations, so that a wait judged to fit does fit despite the usual jitter. Thread-safe.
 */
final class RoundTrips {
    private long smoothed;
    private long deviation;
    private volatile long likely;

    synchronized void add(long nanos) {
        if (likely == 0) {
            smoothed = nanos;
            deviation = nanos / 2;
        } else {
            deviation += (Math.abs(smoothed - nanos) - deviation) / 4;
            smoothed += (nanos - smoothed) / 8;
        }
        likely = smoothed + 4 * deviation;
    }

    /** The round trip a call is likely to take, in nanoseconds; 0 before any was measured. */
    long likelyNanos() {
        return likely;
    }
}
