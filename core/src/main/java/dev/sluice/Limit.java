package dev.sluice;

import dev.sluice.internal.Durations;
import dev.sluice.internal.PolicyChars;
import dev.sluice.internal.Units;

import java.time.Duration;
import java.util.Objects;

/**
 * One rate limit: "{@code count} units per {@code period}", counted by an {@link Algorithm},
 * under a {@code policy} name that appears in storage keys and response headers.
 *
 * <p>Immutable and validated at construction: an invalid value throws
 * {@link IllegalArgumentException} naming the parameter and the value. Copies with one value
 * changed come from the {@code with*} methods:
 *
 * <pre>{@code
 * Limit perSecond = Limit.of("api", "10/s").withBurst(20);                 // token bucket
 * Limit hourly    = Limit.of("api-hourly", "1000/1h").withAlgorithm(Algorithm.SLIDING_WINDOW);
 * }</pre>
 *
 * @param policy    name of the limit: 1 to 64 of {@code A-Z a-z 0-9 . _ ~ -}, or two such names
 *                  joined by one {@code /}, which the web adapters keep for tiers
 *                  ({@code <policy>/<tier>}), so that no configured policy can name a tier's state
 * @param algorithm how requests are counted
 * @param count     units admitted per period, at least 1
 * @param period    the period, from 1 µs to 366 days, in whole microseconds; for
 *                  {@link Algorithm#CONCURRENCY}, the lease: the longest a request holds one
 * @param burst     bucket capacity for {@link Algorithm#TOKEN_BUCKET} and {@link Algorithm#GCRA};
 *                  equal to {@code count} for the window and log algorithms
 * @param cost      units one request spends, from 1 to the {@linkplain #capacity() capacity}; 1 for
 *                  {@link Algorithm#CONCURRENCY}
 */
public record Limit(String policy, Algorithm algorithm, long count, Duration period, long burst, long cost) {

    private static final Duration MAX_PERIOD = Duration.ofDays(366);
    /** Sliding logs keep one entry per admitted unit; this bounds memory per key. */
    public static final long MAX_SLIDING_LOG_COUNT = 100_000;

    /** Validates every component; see the class description. */
    public Limit {
        Objects.requireNonNull(algorithm, "algorithm");
        if (!PolicyChars.isPolicy(policy)) {
            throw new IllegalArgumentException("'policy' must be 1 to " + PolicyChars.MAX_LENGTH + " characters of "
                    + PolicyChars.DESCRIPTION + ", got '" + policy + "'");
        }
        if (count < 1) {
            throw new IllegalArgumentException("'limit' count must be at least 1, got '" + count + "'");
        }
        if (period == null || period.isNegative() || period.isZero() || period.compareTo(MAX_PERIOD) > 0
                || period.toNanosPart() % 1_000 != 0) {
            throw new IllegalArgumentException((algorithm.isRate() ? "'limit' period" : "'lease'")
                    + " must be between 1us and 366d in whole microseconds, got '" + period + "'");
        }
        if (!algorithm.isRate() && cost != 1) {
            throw new IllegalArgumentException("'cost' applies to rate limits; a request holds one lease of "
                    + "concurrency, got '" + cost + "'");
        }
        if (!algorithm.hasBurst() && burst != count) {
            throw new IllegalArgumentException("'burst' applies only to token-bucket and gcra, not to "
                    + algorithm.configName() + ", got '" + burst + "'");
        }
        if (burst < 1) {
            throw new IllegalArgumentException("'burst' must be at least 1, got '" + burst + "'");
        }
        if (cost < 1) {
            throw new IllegalArgumentException("'cost' must be at least 1, got '" + cost + "'");
        }
        long capacity = algorithm.hasBurst() ? burst : count;
        if (cost > capacity) {
            throw new IllegalArgumentException("'cost' must not exceed the "
                    + (algorithm.hasBurst() ? "burst" : "limit")
                    + " (" + capacity + "), or no request could ever pass, got '" + cost + "'");
        }
        if (algorithm == Algorithm.SLIDING_LOG && count > MAX_SLIDING_LOG_COUNT) {
            throw new IllegalArgumentException("'limit' of sliding-log keeps one entry per unit and may be at most "
                    + MAX_SLIDING_LOG_COUNT + " per period, got '" + count + "'");
        }
        checkExact(algorithm, count, periodMicros(period), burst);
    }

    /** Throws if the limit's arithmetic could leave the range both stores compute exactly. */
    private static void checkExact(Algorithm algorithm, long count, long periodMicros, long burst) {
        boolean exact = switch (algorithm) {
            case TOKEN_BUCKET, GCRA -> Units.of(count, periodMicros, burst).exact();
            case SLIDING_WINDOW -> count <= Units.WINDOW_MAX / periodMicros;
            case FIXED_WINDOW, SLIDING_LOG, CONCURRENCY -> count <= Units.BUCKET_MAX;
        };
        if (!exact) {
            throw new IllegalArgumentException("'limit' " + count + " per " + periodMicros + "us"
                    + (algorithm.hasBurst() ? " with burst " + burst : "") + " is too large for "
                    + algorithm.configName()
                    + " to count exactly; use a shorter period or a smaller count");
        }
    }

    /**
     * A token-bucket limit from the configuration syntax {@code <count>/<period>}, such as
     * {@code 10/s}, {@code 100/1m}, {@code 20/500ms}, {@code 5000/1h} or {@code 1000/1d}; burst
     * equals the count and the cost is 1.
     *
     * @throws IllegalArgumentException if the policy or the limit is malformed
     */
    public static Limit of(String policy, String limit) {
        Durations.Rate parsed = Durations.parseRate(limit);
        return new Limit(policy, Algorithm.TOKEN_BUCKET, parsed.count(), parsed.period(), parsed.count(), 1);
    }

    /**
     * A cap of {@code max} requests in flight per caller ({@link Algorithm#CONCURRENCY}), each
     * holding its lease at most {@code lease}: for {@link ConcurrencyLimiter}.
     */
    public static Limit concurrency(String policy, long max, Duration lease) {
        return new Limit(policy, Algorithm.CONCURRENCY, max, lease, max, 1);
    }

    /** A token-bucket limit of {@code count} per {@code period}; burst equals the count, cost 1. */
    public static Limit of(String policy, long count, Duration period) {
        return new Limit(policy, Algorithm.TOKEN_BUCKET, count, period, count, 1);
    }

    /** This limit counted by another algorithm; a window or log drops any burst. */
    public Limit withAlgorithm(Algorithm newAlgorithm) {
        long newBurst = Objects.requireNonNull(newAlgorithm, "algorithm").hasBurst() && algorithm.hasBurst() ? burst
                : count;
        return new Limit(policy, newAlgorithm, count, period, newBurst, cost);
    }

    /** This limit with another bucket capacity (token-bucket and gcra only). */
    public Limit withBurst(long newBurst) {
        return new Limit(policy, algorithm, count, period, newBurst, cost);
    }

    /** This limit with another cost per request. */
    public Limit withCost(long newCost) {
        return new Limit(policy, algorithm, count, period, burst, newCost);
    }

    /** This limit under another policy name. */
    public Limit withPolicy(String newPolicy) {
        return new Limit(newPolicy, algorithm, count, period, burst, cost);
    }

    /** The most units one decision can ever grant: {@code burst} for buckets, {@code count} otherwise. */
    public long capacity() {
        return algorithm.hasBurst() ? burst : count;
    }

    /** The period in microseconds. */
    public long periodMicros() {
        return periodMicros(period);
    }

    private static long periodMicros(Duration period) {
        return period.getSeconds() * 1_000_000L + period.toNanosPart() / 1_000;
    }

    /** The configuration form, e.g. {@code api: token-bucket 10/1s burst 20 cost 1}. */
    @Override
    public String toString() {
        if (!algorithm.isRate()) {
            return policy + ": concurrency " + count + " lease " + Durations.formatDuration(period);
        }
        return policy + ": " + algorithm.configName() + " " + count + "/" + Durations.formatDuration(period)
                + (algorithm.hasBurst() ? " burst " + burst : "") + " cost " + cost;
    }
}
