package dev.sluice.web;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.internal.Durations;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * What one limited route asks for, the per-route part of the vocabulary ({@link Parameter.Scope#ROUTE}):
 * the limit ({@code policy}, {@code algorithm}, {@code limit}, {@code burst}, {@code cost}), the
 * {@code key} and the {@code failure-mode}. Built once at start-up: from raw values by
 * {@link #parse} (init-params), or from typed ones by {@link #of} (annotation attributes), which
 * {@code parse} ends in, so both meet the same checks and messages.
 *
 * <p>Errors are {@link IllegalArgumentException}s naming the parameter and the raw value, e.g.
 * {@code 'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'}.
 *
 * @param limit       the limit, validated by {@link Limit}
 * @param key         where the caller's identity comes from, tried in order; not empty
 * @param failureMode what to do when the store fails or is late
 */
public record RouteSpec(Limit limit, List<KeySource> key, FailureMode failureMode) {

    /** Validates and copies the components. */
    public RouteSpec {
        Objects.requireNonNull(limit, "limit");
        key = List.copyOf(key);
        if (key.isEmpty()) {
            throw new IllegalArgumentException("'key' must name at least one source");
        }
        Objects.requireNonNull(failureMode, "failureMode");
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
        return new RouteSpec(new Limit(policy, algorithm, rate.count(), rate.period(), burst != 0 ? burst : rate.count(),
                cost), key == null || key.isBlank() ? KeySource.IP : KeySource.parseList(key), failureMode);
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
                Parameter.FAILURE_MODE.parse(lookup, FailureMode::fromConfigName, FailureMode.OPEN));
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
