package dev.sluice.web;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.internal.Durations;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * What one limited route asks for, the per-route part of the vocabulary ({@link Parameter.Scope#ROUTE}):
 * the limit ({@code policy}, {@code algorithm}, {@code limit}, {@code burst}, {@code cost}), the
 * {@code key}, the {@code failure-mode}, the named tiers ({@code tier-limits}) and the
 * {@code methods} limited. Built once at start-up: from raw values by
 * {@link #parse} (init-params), or from typed ones by {@link #of} (annotation attributes), which
 * {@code parse} ends in, so both meet the same checks and messages.
 *
 * <p>Errors are {@link IllegalArgumentException}s naming the parameter and the raw value, e.g.
 * {@code 'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'}.
 *
 * @param limit       the limit, validated by {@link Limit}
 * @param key         where the caller's identity comes from, tried in order; not empty
 * @param failureMode what to do when the store fails or is late
 * @param tiers       the named tiers, in order; {@link #limit} is the default tier's
 * @param methods     the HTTP methods limited, upper case; empty: all
 */
public record RouteSpec(Limit limit, List<KeySource> key, FailureMode failureMode, List<Tier> tiers,
                        Set<String> methods) {

    /** Validates and copies the components. */
    public RouteSpec {
        Objects.requireNonNull(limit, "limit");
        key = List.copyOf(key);
        if (key.isEmpty()) {
            throw new IllegalArgumentException("'key' must name at least one source");
        }
        Objects.requireNonNull(failureMode, "failureMode");
        tiers = List.copyOf(tiers);
        methods = Set.copyOf(methods);
    }

    /** A route without tiers, limiting every method. */
    public RouteSpec(Limit limit, List<KeySource> key, FailureMode failureMode) {
        this(limit, key, failureMode, List.of(), Set.of());
    }

    /**
     * A route from typed values; only {@code limit} and {@code key} are text to parse.
     *
     * @param policy      the policy name, used exactly as given
     * @param algorithm   how requests are counted
     * @param limit       {@code <count>/<period>}, such as {@code 100/1m}; required
     * @param burst       the bucket's capacity, at least 1; {@code 0}: the count of {@code limit}
     * @param cost        units one request spends, at least 1
     * @param key         the {@code key} sources, such as {@code header:X-API-Key,ip}; blank: {@code ip}
     * @param failureMode what to do when the store fails
     * @throws IllegalArgumentException naming the first bad parameter and its value
     */
    public static RouteSpec of(String policy, Algorithm algorithm, String limit, long burst, long cost, String key,
                               FailureMode failureMode) {
        return of(policy, algorithm, limit, burst, cost, key, failureMode, null, null);
    }

    /**
     * A route from typed values, with tiers and methods; only {@code limit}, {@code key},
     * {@code tierLimits} and {@code methods} are text to parse.
     *
     * @param tierLimits {@code tier-limits}, such as {@code premium:1000/1h,internal:unlimited}; blank: no tiers
     * @param methods    {@code methods}, such as {@code POST,PUT}; blank: every method
     * @throws IllegalArgumentException naming the first bad parameter and its value
     * @see #of(String, Algorithm, String, long, long, String, FailureMode)
     */
    public static RouteSpec of(String policy, Algorithm algorithm, String limit, long burst, long cost, String key,
                               FailureMode failureMode, String tierLimits, String methods) {
        if (limit == null || limit.isBlank()) {
            throw new IllegalArgumentException("'limit' is required, e.g. 100/1m");
        }
        Durations.Rate rate = Durations.parseRate(limit.trim());
        checkPositive(Parameter.BURST, burst, burst >= 0);
        checkPositive(Parameter.COST, cost, cost >= 1);
        if (burst != 0 && !algorithm.hasBurst()) {
            throw new IllegalArgumentException("'burst' applies only to token-bucket and gcra, not to "
                    + algorithm.configName() + ", got '" + burst + "'");
        }
        Limit base = new Limit(policy, algorithm, rate.count(), rate.period(), burst != 0 ? burst : rate.count(), cost);
        return new RouteSpec(base, key == null || key.isBlank() ? KeySource.IP : KeySource.parseList(key), failureMode,
                tierLimits == null || tierLimits.isBlank() ? List.of() : Tier.parseList(tierLimits.trim(), base),
                HttpMethods.parse(methods));
    }

    /**
     * Parses the route parameters from raw values ({@code null} or blank: absent), applying the
     * defaults.
     *
     * @param lookup        the raw values, e.g. {@code filterConfig::getInitParameter}
     * @param defaultPolicy the policy name when {@code policy} is absent
     * @throws IllegalArgumentException naming the first bad parameter and its value
     */
    public static RouteSpec parse(Function<String, String> lookup, String defaultPolicy) {
        String policy = Parameter.POLICY.raw(lookup);
        return of(policy != null ? policy : defaultPolicy,
                Parameter.ALGORITHM.parse(lookup, Algorithm::fromConfigName, Algorithm.TOKEN_BUCKET),
                Parameter.LIMIT.raw(lookup),
                Parameter.BURST.parse(lookup, v -> parsePositive(Parameter.BURST, v), 0L),
                Parameter.COST.parse(lookup, v -> parsePositive(Parameter.COST, v), 1L),
                Parameter.KEY.raw(lookup),
                Parameter.FAILURE_MODE.parse(lookup, FailureMode::fromConfigName, FailureMode.OPEN),
                Parameter.TIER_LIMITS.raw(lookup),
                Parameter.METHODS.raw(lookup));
    }

    private static long parsePositive(Parameter parameter, String value) {
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            parsed = 0; // reported below with the parameter's name
        }
        checkPositive(parameter, value, parsed >= 1);
        return parsed;
    }

    private static void checkPositive(Parameter parameter, Object value, boolean valid) {
        if (!valid) {
            throw new IllegalArgumentException("'" + parameter.configName() + "' must be an integer of at least 1, got '"
                    + value + "'");
        }
    }
}
