package dev.sluice.internal;

import dev.sluice.Algorithm;
import dev.sluice.Limit;

/**
 * Fixed-point units shared by the Java algorithms and the Lua scripts.
 *
 * <p>A bucket of {@code burst} tokens refilling at {@code count} per {@code period} µs is kept in
 * integer units: one token is {@code unitsPerToken = period/g} units and the bucket gains
 * {@code unitsPerMicro = count/g} units per microsecond, where {@code g = gcd(count, period)}.
 * Every value then stays an integer, and {@link #check} keeps them below 2<sup>53</sup>, so that
 * Lua's doubles compute them exactly, like Java's longs.
 *
 * <p>Not API: this package may change in any release.
 */
public record Units(long unitsPerToken, long unitsPerMicro, long capacityUnits) {

    /** A bucket's capacity and rate stay below this, so sums of a few of them stay exact. */
    static final long BUCKET_MAX = 1L << 51;
    /** A sliding window's {@code count * period} stays below this: the largest exact double integer. */
    static final long WINDOW_MAX = 1L << 53;

    /** The units of a bucket limit. */
    public static Units of(Limit limit) {
        return of(limit.count(), limit.periodMicros(), limit.burst());
    }

    private static Units of(long count, long periodMicros, long burst) {
        long g = gcd(count, periodMicros);
        long perToken = periodMicros / g;
        long perMicro = count / g;
        long capacity = burst > BUCKET_MAX / perToken ? Long.MAX_VALUE : burst * perToken;
        return new Units(perToken, perMicro, capacity);
    }

    /**
     * Throws if a limit's arithmetic could leave the range both stores compute exactly.
     *
     * @throws IllegalArgumentException naming the limit
     */
    public static void check(Algorithm algorithm, long count, long periodMicros, long burst) {
        boolean exact = switch (algorithm) {
            case TOKEN_BUCKET, GCRA -> {
                Units units = of(count, periodMicros, burst);
                yield units.capacityUnits <= BUCKET_MAX && units.unitsPerMicro <= BUCKET_MAX;
            }
            case SLIDING_WINDOW -> count <= WINDOW_MAX / periodMicros;
            case FIXED_WINDOW, SLIDING_LOG -> count <= BUCKET_MAX;
        };
        if (!exact) {
            throw new IllegalArgumentException("'limit' " + count + " per " + periodMicros + "us"
                    + (algorithm.hasBurst() ? " with burst " + burst : "") + " is too large for " + algorithm.configName()
                    + " to count exactly; use a shorter period or a smaller count");
        }
    }

    private static long gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return a;
    }
}
