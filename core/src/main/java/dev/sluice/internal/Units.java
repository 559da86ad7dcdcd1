package dev.sluice.internal;

/**
 * Fixed-point units shared by the Java algorithms and the Lua scripts.
 *
 * <p>A bucket of {@code burst} tokens refilling at {@code count} per {@code period} µs is kept in
 * integer units: one token is {@code unitsPerToken = period/g} units and the bucket gains
 * {@code unitsPerMicro = count/g} units per microsecond, where {@code g = gcd(count, period)}.
 * Every value then stays an integer, and {@code Limit} keeps them below 2<sup>53</sup>, so that
 * Lua's doubles compute them exactly, like Java's longs.
 *
 * <p>Not API: this package may change in any release.
 */
public record Units(long unitsPerToken, long unitsPerMicro, long capacityUnits) {

    /** A bucket's capacity and rate stay below this, so sums of a few of them stay exact. */
    public static final long BUCKET_MAX = 1L << 51;
    /** A sliding window's {@code count * period} stays below this: the largest exact double integer. */
    public static final long WINDOW_MAX = 1L << 53;

    /** The units of a bucket of {@code burst} tokens refilling {@code count} per {@code periodMicros}. */
    public static Units of(long count, long periodMicros, long burst) {
        long g = gcd(count, periodMicros);
        long perToken = periodMicros / g;
        long perMicro = count / g;
        long capacity = burst > BUCKET_MAX / perToken ? Long.MAX_VALUE : burst * perToken;
        return new Units(perToken, perMicro, capacity);
    }

    /** Whether a bucket's units stay in the range both stores compute exactly. */
    public boolean exact() {
        return capacityUnits <= BUCKET_MAX && unitsPerMicro <= BUCKET_MAX;
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
