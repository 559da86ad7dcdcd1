package dev.sluice.spi;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sluice.Algorithm;
import dev.sluice.Limit;
import dev.sluice.internal.Units;

/**
 * What a store needs of one {@link Limit} (with its cost), derived once: the fixed-point units of
 * {@link Units}, the units one request spends, and how long a state can stay different from an
 * absent one.
 *
 * <p>A window or log counts whole units: its units are {@code 1, 1, count}, the form the Lua
 * script takes for every algorithm. {@link #of(Limit)} finds the compiled form of a limit
 * <em>instance</em> (an identity lookup, never {@code Limit.hashCode}), computing it the first time;
 * {@code RateLimiter} compiles its limits, and those of every cost it is asked for, when it first
 * holds them. Entries go when their limit is collected, so the cache holds no limit of its own: a
 * compiled limit keeps no reference to its {@code Limit}.
 *
 * <p>Audience: store authors. Immutable and thread-safe.
 */
public final class CompiledLimit {

    /** Weak keys compare by identity; maintenance on the caller's thread starts no pool thread. */
    private static final Cache<Limit, CompiledLimit> COMPILED = Caffeine.newBuilder()
            .weakKeys()
            .executor(Runnable::run)
            .build();

    private final Algorithm algorithm;
    private final long count;
    private final long periodMicros;
    private final long burst;
    private final long cost;
    private final long unitsPerToken;
    private final long unitsPerMicro;
    private final long capacityUnits;
    private final long longestTtlMicros;

    private CompiledLimit(Limit limit) {
        this.algorithm = limit.algorithm();
        this.count = limit.count();
        this.periodMicros = limit.periodMicros();
        this.burst = limit.burst();
        this.cost = limit.cost();
        if (algorithm.hasBurst()) {
            Units units = Units.of(count, periodMicros, burst);
            this.unitsPerToken = units.unitsPerToken();
            this.unitsPerMicro = units.unitsPerMicro();
            this.capacityUnits = units.capacityUnits();
            // the time to refill from empty, one microsecond more for a partial token
            this.longestTtlMicros = -Math.floorDiv(-capacityUnits, unitsPerMicro) + 1;
        } else {
            this.unitsPerToken = 1;
            this.unitsPerMicro = 1;
            this.capacityUnits = count;
            // a sliding window still weighs the previous window; the others forget after one
            this.longestTtlMicros = algorithm == Algorithm.SLIDING_WINDOW ? 2 * periodMicros : periodMicros;
        }
    }

    /** The compiled form of {@code limit}: the same instance for the same limit instance. */
    public static CompiledLimit of(Limit limit) {
        return COMPILED.get(limit, CompiledLimit::new);
    }

    /** How the limit counts. */
    public Algorithm algorithm() {
        return algorithm;
    }

    /** Units admitted per period ({@link Limit#count()}). */
    public long count() {
        return count;
    }

    /** The period in microseconds ({@link Limit#periodMicros()}). */
    public long periodMicros() {
        return periodMicros;
    }

    /** The bucket capacity in tokens ({@link Limit#burst()}); the count for windows and logs. */
    public long burst() {
        return burst;
    }

    /** Units one request spends ({@link Limit#cost()}). */
    public long cost() {
        return cost;
    }

    /** Fixed-point units of one token (see {@link Units}); 1 for windows and logs. */
    public long unitsPerToken() {
        return unitsPerToken;
    }

    /** Fixed-point units a bucket regains per microsecond; 1 for windows and logs. */
    public long unitsPerMicro() {
        return unitsPerMicro;
    }

    /** The bucket's capacity in fixed-point units; the count for windows and logs. */
    public long capacityUnits() {
        return capacityUnits;
    }

    /** The fixed-point units one request spends: {@code cost * unitsPerToken}. */
    public long costUnits() {
        return cost * unitsPerToken;
    }

    /**
     * The longest time a state of this limit can stay different from an absent one: a bucket's
     * time to refill from empty, a sliding window's two windows, a window's or log's period.
     */
    public long longestTtlMicros() {
        return longestTtlMicros;
    }

    /** {@link #longestTtlMicros()} in nanoseconds, saturated at {@link Long#MAX_VALUE}. */
    public long longestTtlNanos() {
        return longestTtlMicros > Long.MAX_VALUE / 1_000 ? Long.MAX_VALUE : longestTtlMicros * 1_000;
    }

    /**
     * Whether a state written under {@code other} (same policy and algorithm) is read under this
     * one without conversion: same count, period and burst; the cost does not matter.
     */
    public boolean sameParameters(CompiledLimit other) {
        return count == other.count && periodMicros == other.periodMicros && burst == other.burst;
    }

    @Override
    public String toString() {
        return "CompiledLimit[" + algorithm.configName() + " " + count + "/" + periodMicros + "us burst " + burst
                + " cost " + cost + " units " + unitsPerToken + "/" + unitsPerMicro + "/" + capacityUnits + "]";
    }
}
