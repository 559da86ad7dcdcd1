package dev.sluice.web.internal;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.internal.Durations;
import dev.sluice.internal.PolicyChars;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * What one limited route asks for, the per-route part of the vocabulary ({@link Parameter.Scope#ROUTE}):
 * the limit ({@code policy}, {@code algorithm}, {@code limit}, {@code burst}, {@code cost}, and for
 * {@code algorithm=concurrency} its {@code lease}), the {@code key}, the {@code failure-mode}, the
 * named tiers ({@code tier-limits}), the {@code methods} limited and when it charges
 * ({@code charge}, {@code charge-when}). Built once at start-up: from raw values by
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
 * @param methods     the HTTP methods limited, upper case; empty: all. {@code GET} brings {@code HEAD}
 * @param charging    when the rate limit charges: before the request runs, or after its status is known
 */
public record RouteSpec(Limit limit, List<KeySource> key, FailureMode failureMode, List<Tier> tiers,
                        Set<String> methods, Charging charging) {

    /** The default {@code lease} of {@code algorithm=concurrency}. */
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

    /** Validates and copies the components. */
    public RouteSpec {
        Objects.requireNonNull(limit, "limit");
        key = List.copyOf(key);
        if (key.isEmpty()) {
            throw new IllegalArgumentException("'key' must name at least one source");
        }
        Objects.requireNonNull(failureMode, "failureMode");
        tiers = List.copyOf(tiers);
        methods = HttpMethods.withHead(methods); // GET brings HEAD: doHead runs doGet
        Objects.requireNonNull(charging, "charging");
        if (charging.after() && !limit.algorithm().isRate()) {
            throw new IllegalArgumentException(
                    "'charge' applies to rate limits; a lease of concurrency is returned when "
                    + "the response completes, got 'after'");
        }
        if (!tiers.isEmpty() && !limit.algorithm().isRate()) {
            throw new IllegalArgumentException("'tier-limits' applies to rate limits, not to concurrency, got '"
                    + String.join(",", tiers.stream().map(Tier::toString).toList()) + "'");
        }
    }

    /** A route without tiers, limiting every method, charged as it is decided ({@code charge=before}). */
    public RouteSpec(Limit limit, List<KeySource> key, FailureMode failureMode) {
        this(limit, key, failureMode, List.of(), Set.of(), Charging.BEFORE);
    }

    /** A route charged as it is decided ({@code charge=before}). */
    public RouteSpec(Limit limit, List<KeySource> key, FailureMode failureMode, List<Tier> tiers, Set<String> methods) {
        this(limit, key, failureMode, tiers, methods, Charging.BEFORE);
    }

    /**
     * A route from typed values; only {@code limit} and {@code key} are text to parse.
     *
     * @param policy      the policy name, used exactly as given: 1 to 64 of {@code A-Z a-z 0-9 . _ ~ -}
     * @param algorithm   how requests are counted
     * @param limit       {@code <count>/<period>}, such as {@code 100/1m}; required. For
     *                    {@code algorithm=concurrency}, the most requests in flight, such as
     *                    {@code 10}, each holding its place at most {@link #DEFAULT_LEASE} (see
     *                    {@link #withCompletion})
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
        if (policy != null && policy.indexOf(Tier.SEPARATOR) >= 0) {
            throw new IllegalArgumentException("'policy' must be 1 to " + PolicyChars.MAX_LENGTH + " characters of "
                    + PolicyChars.DESCRIPTION + " ('"
                    + Tier.SEPARATOR + "' names a tier's state: <policy>" + Tier.SEPARATOR + "<tier>), got '" + policy
                    + "'");
        }
        if (limit == null || limit.isBlank()) {
            throw new IllegalArgumentException("'limit' is required, e.g. 100/1m");
        }
        if (!algorithm.isRate()) {
            if (tierLimits != null && !tierLimits.isBlank()) {
                throw new IllegalArgumentException("'tier-limits' applies to rate limits, not to concurrency, got '"
                        + tierLimits.trim() + "'");
            }
            RouteSpec cap = concurrency(policy, limit.trim(), burst, cost, key, failureMode);
            return new RouteSpec(cap.limit(), cap.key(), failureMode, List.of(), HttpMethods.parse(methods));
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

    private static RouteSpec concurrency(String policy, String limit, long burst, long cost, String key,
                                         FailureMode failureMode) {
        if (!limit.matches("[0-9]{1,15}") || Long.parseLong(limit) < 1) {
            throw new IllegalArgumentException("'limit' of algorithm concurrency is the most requests in flight, an "
                    + "integer of at least 1 such as 10, got '" + limit + "'");
        }
        if (burst != 0) {
            throw new IllegalArgumentException(
                    "'burst' applies only to token-bucket and gcra, not to concurrency, got '"
                    + burst + "'");
        }
        checkPositive(Parameter.COST, cost, cost >= 1);
        Limit cap = new Limit(policy, Algorithm.CONCURRENCY, Long.parseLong(limit), DEFAULT_LEASE,
                Long.parseLong(limit),
                cost);
        return new RouteSpec(cap, key == null || key.isBlank() ? KeySource.IP : KeySource.parseList(key), failureMode);
    }

    /**
     * This route with the parameters settled when the response completes, from raw values
     * ({@code null} or blank: the default): {@code charge}, {@code charge-when} (see
     * {@link Charging}) and, for {@code algorithm=concurrency}, {@code lease}, such as {@code 30s}.
     *
     * @throws IllegalArgumentException naming the first bad parameter and its value
     */
    public RouteSpec withCompletion(String charge, String chargeWhen, String lease) {
        Limit newLimit = limit;
        if (lease != null && !lease.isBlank()) {
            if (limit.algorithm().isRate()) {
                throw new IllegalArgumentException("'lease' applies only to algorithm concurrency, not to "
                        + limit.algorithm().configName() + ", got '" + lease.trim() + "'");
            }
            try {
                newLimit = Limit.concurrency(limit.policy(), limit.count(), Durations.parseDuration("lease", lease));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(e.getMessage().startsWith("'lease' must look like") ? e.getMessage()
                        : "'lease' must be between 1ms and 366d, got '" + lease.trim() + "'", e);
            }
        }
        return new RouteSpec(newLimit, key, failureMode, tiers, methods, Charging.parse(charge, chargeWhen));
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
        RouteSpec route = of(policy != null ? policy : defaultPolicy,
                Parameter.ALGORITHM.parse(lookup, Algorithm::fromConfigName, Algorithm.TOKEN_BUCKET),
                Parameter.LIMIT.raw(lookup),
                Parameter.BURST.parse(lookup, v -> parsePositive(Parameter.BURST, v), 0L),
                Parameter.COST.parse(lookup, v -> parsePositive(Parameter.COST, v), 1L),
                Parameter.KEY.raw(lookup),
                Parameter.FAILURE_MODE.parse(lookup, FailureMode::fromConfigName, FailureMode.OPEN),
                Parameter.TIER_LIMITS.raw(lookup),
                Parameter.METHODS.raw(lookup));
        return route.withCompletion(Parameter.CHARGE.raw(lookup), Parameter.CHARGE_WHEN.raw(lookup),
                Parameter.LEASE.raw(lookup));
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
            throw new IllegalArgumentException("'" + parameter.configName()
                    + "' must be an integer of at least 1, got '"
                    + value + "'");
        }
    }
}
