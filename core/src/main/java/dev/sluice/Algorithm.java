package dev.sluice;

import java.util.Locale;

/**
 * The five ways Sluice can count a rate, and the cap on requests in flight. Each is exact on both
 * stores and each has a documented flaw; pick the one whose flaw you can live with.
 *
 * <ul>
 *   <li>{@link #TOKEN_BUCKET} (the default): capacity {@code burst}, refilled continuously at the
 *       {@code limit} rate. Forgives bursts up to {@code burst}, then holds the caller to the
 *       average rate. Flaw: a quiet caller may spend a whole burst at once.
 *   <li>{@link #GCRA}: the same admissions as the token bucket, stored as one time value.
 *       The arrival time is kept exactly (whole microseconds plus a
 *       fixed-point remainder), so it admits exactly what the token bucket admits with the same
 *       rate and burst. Flaw: the math is subtle and hard to review; under a clock that moves
 *       backwards it is stricter than the bucket (it grants nothing extra either way).
 *   <li>{@link #SLIDING_WINDOW}: Cloudflare's counter; the previous window's count, weighted by
 *       the share of it still inside the trailing window, plus the current count. Flaw: an
 *       estimate, assuming the previous window's requests were evenly spread.
 *   <li>{@link #FIXED_WINDOW}: one counter reset at window edges. Flaw: a caller may send
 *       {@code limit} at the end of one window and {@code limit} again at the start of the
 *       next: twice the limit within a short span.
 *   <li>{@link #SLIDING_LOG}: one timestamp per admitted unit, at most {@code limit} of them;
 *       exact. Flaw: memory and work grow with the limit.
 *   <li>{@link #CONCURRENCY}: not a rate but a cap on requests in flight: a request holds one of
 *       {@code count} leases from its start until its response completes, or at most
 *       {@code period} (the lease), after which a lease left behind (an instance that died
 *       mid-request) expires. Decided by {@link ConcurrencyLimiter}, never by {@link RateLimiter}.
 *       Flaw: a request that outlives its lease no longer counts.
 * </ul>
 */
public enum Algorithm {
    TOKEN_BUCKET("token-bucket"),
    GCRA("gcra"),
    SLIDING_WINDOW("sliding-window"),
    FIXED_WINDOW("fixed-window"),
    SLIDING_LOG("sliding-log"),
    CONCURRENCY("concurrency");

    private final String configName;

    Algorithm(String configName) {
        this.configName = configName;
    }

    /** The name used in configuration, e.g. {@code token-bucket}. */
    public String configName() {
        return configName;
    }

    /** Whether {@code burst} applies (a bucket) rather than {@code limit} alone (a window or log). */
    public boolean hasBurst() {
        return this == TOKEN_BUCKET || this == GCRA;
    }

    private static final java.util.List<Algorithm> RATES = java.util.Arrays.stream(values()).filter(Algorithm::isRate)
            .toList();

    /** The algorithms that limit a rate, in declaration order: {@link #values()} without {@link #CONCURRENCY}. */
    public static java.util.List<Algorithm> rates() {
        return RATES;
    }

    /** Whether this algorithm limits a rate (units per period): every one but {@link #CONCURRENCY}. */
    public boolean isRate() {
        return this != CONCURRENCY;
    }

    /**
     * Reads a configuration name such as {@code sliding-window}; case and {@code _} versus
     * {@code -} are forgiven.
     *
     * @throws IllegalArgumentException naming the value and the accepted names
     */
    public static Algorithm fromConfigName(String value) {
        if (value != null) {
            String normal = value.trim().toLowerCase(Locale.ROOT).replace('_', '-');
            for (Algorithm algorithm : values()) {
                if (algorithm.configName.equals(normal)) {
                    return algorithm;
                }
            }
        }
        throw new IllegalArgumentException("'algorithm' must be one of token-bucket, gcra, sliding-window, "
                + "fixed-window, sliding-log, concurrency, got '" + value + "'");
    }
}
