package dev.sluice.gateway;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.HeaderStyle;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.Response;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The compiled limits of one route: its rate limiter, built once when the route is bound, and how
 * a decision reads as the gateway's {@link Response}. Immutable and thread-safe.
 *
 * @param route   the route id
 * @param limiter decides the route's requests
 * @param headers the route's header style
 */
record RouteLimits(String route, RateLimiter limiter, GatewayHeaders headers) {

    private static final Pattern POLICY = Pattern.compile("[A-Za-z0-9._~-]{1,64}");
    private static final Response OPEN = new Response(true, Map.of());

    /**
     * Compiles a route's arguments, each unset one taken from {@code defaults}; {@code route}
     * {@code null} compiles the defaults alone, to check them at start-up.
     *
     * @throws IllegalArgumentException naming the route or the property, the argument and the value
     */
    static RouteLimits of(String route, SluiceRateLimiter.Config arguments, SluiceRateLimiter.Config defaults,
                          RateLimitStore store) {
        Values values = new Values(route, arguments, defaults);
        String limitText = values.get("limit", SluiceRateLimiter.Config::getLimit);
        if (limitText == null || limitText.isBlank()) {
            throw new IllegalArgumentException("route '" + route + "': no 'limit': set the route's argument '"
                    + SluiceRateLimiter.CONFIGURATION_PROPERTY_NAME + ".limit' or the property 'sluice.gateway.limit'"
                    + " (e.g. 10/1s,1000/1h)");
        }
        Algorithm algorithm = values.parse("algorithm", SluiceRateLimiter.Config::getAlgorithm,
                Algorithm::fromConfigName, Algorithm.TOKEN_BUCKET);
        if (!algorithm.isRate()) {
            throw values.invalid("algorithm", SluiceRateLimiter.Config::getAlgorithm,
                    "'algorithm' must be a rate (token-bucket, gcra, sliding-window, fixed-window, sliding-log): "
                    + "the gateway's rate limiter is not told when a response ends, which a concurrency limit needs");
        }
        long cost = values.parse("cost", SluiceRateLimiter.Config::getCost,
                text -> positive("cost", text), 1L);
        String policyText = values.get("policy", SluiceRateLimiter.Config::getPolicy);
        if (policyText != null && !POLICY.matcher(policyText.trim()).matches()) {
            throw values.invalid("policy", SluiceRateLimiter.Config::getPolicy,
                    "'policy' must be 1 to 64 characters of A-Z a-z 0-9 . _ ~ -");
        }
        String policy = policyText != null ? policyText.trim() : policyOf(route == null ? "defaults" : route);
        String[] limitParts = limitText.split(",", -1);
        String burstText = values.get("burst", SluiceRateLimiter.Config::getBurst);
        String[] bursts = burstText == null ? new String[0] : burstText.split(",", -1);
        if (bursts.length > limitParts.length) {
            throw values.invalid("burst", SluiceRateLimiter.Config::getBurst,
                    "'burst' has " + bursts.length + " values but 'limit' only " + limitParts.length + " limits");
        }
        List<Limit> limits = new ArrayList<>();
        Set<String> policies = new HashSet<>();
        for (int i = 0; i < limitParts.length; i++) {
            String part = limitParts[i].trim();
            int slash = part.indexOf('/');
            String period = slash < 0 ? part : part.substring(slash + 1);
            String name = limitParts.length == 1 ? policy : policy + "-" + period;
            Limit limit;
            try {
                limit = Limit.of(name, part).withAlgorithm(algorithm);
                if (i < bursts.length) {
                    limit = limit.withBurst(positive("burst", bursts[i].trim()));
                }
                limit = limit.withCost(cost);
            } catch (IllegalArgumentException e) {
                throw values.invalid("limit", SluiceRateLimiter.Config::getLimit, e.getMessage());
            }
            if (!policies.add(limit.policy())) {
                throw values.invalid("limit", SluiceRateLimiter.Config::getLimit,
                        "two limits of one route count under the policy '" + limit.policy()
                        + "': give them different periods");
            }
            limits.add(limit);
        }
        FailureMode failureMode = values.parse("failure-mode", SluiceRateLimiter.Config::getFailureMode,
                FailureMode::fromConfigName, FailureMode.OPEN);
        Duration timeout = values.parse("timeout", SluiceRateLimiter.Config::getTimeout,
                text -> DurationStyle.detectAndParse(text.trim()), Duration.ofMillis(100));
        HeaderStyle headers = values.parse("headers", SluiceRateLimiter.Config::getHeaders,
                HeaderStyle::parse, HeaderStyle.LEGACY);
        RateLimiter limiter;
        try {
            limiter = RateLimiter.builder().limits(limits).store(store).failureMode(failureMode).timeout(timeout)
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException((route == null ? "" : "route '" + route + "': ") + e.getMessage());
        }
        return new RouteLimits(route, limiter, new GatewayHeaders(headers, limits));
    }

    /** The gateway's answer to a decision; see {@link SluiceRateLimiter}. */
    Response response(Decision decision) {
        return switch (decision.outcome()) {
            case ALLOWED, LOCAL_ALLOWED, SHADOW_REJECTED -> new Response(true, headers.of(decision));
            case FAILED_OPEN -> OPEN;
            case FAILED_CLOSED -> new Response(false, Map.of("Retry-After", GatewayHeaders.retryAfter(decision)));
            case REJECTED, LOCAL_REJECTED, UNSATISFIABLE -> new Response(false, headers.refusal(decision));
        };
    }

    /** The route id as a policy name, or a hash of it when it is not one (a generated or long id). */
    static String policyOf(String route) {
        if (POLICY.matcher(route).matches()) {
            return route;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(route.getBytes(StandardCharsets.UTF_8));
            return "route-" + HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is in every JDK", e);
        }
    }

    private static long positive(String name, String text) {
        try {
            long value = Long.parseLong(text.trim());
            if (value >= 1) {
                return value;
            }
        } catch (NumberFormatException e) {
            // the message below names the value
        }
        throw new IllegalArgumentException("'" + name + "' must be an integer of at least 1, got '" + text + "'");
    }

    @Override
    public String toString() {
        return route + "=" + limiter.limits();
    }

    /** Reads each value from the route's arguments, else from the defaults, and names its source in errors. */
    private record Values(String route, SluiceRateLimiter.Config arguments, SluiceRateLimiter.Config defaults) {

        String get(String name, Function<SluiceRateLimiter.Config, String> getter) {
            String value = getter.apply(arguments);
            return value != null ? value : getter.apply(defaults);
        }

        <T> T parse(String name, Function<SluiceRateLimiter.Config, String> getter, Function<String, T> parser,
                    T absent) {
            String value = get(name, getter);
            if (value == null) {
                return absent;
            }
            try {
                return parser.apply(value);
            } catch (IllegalArgumentException e) {
                throw invalid(name, getter, e.getMessage());
            }
        }

        /** An error naming where the value came from: the route's argument or the default property. */
        IllegalArgumentException invalid(String name, Function<SluiceRateLimiter.Config, String> getter,
                                         String message) {
            String where = (route == null ? "" : "route '" + route + "': ") + (getter.apply(arguments) != null
                    ? "argument '" + SluiceRateLimiter.CONFIGURATION_PROPERTY_NAME + "." + name + "'"
                    : "property 'sluice.gateway." + name + "'");
            String detail = message.startsWith("'" + name + "' ") ? message.substring(name.length() + 3) : message;
            return new IllegalArgumentException(where + " " + detail + (detail.contains("got '") ? ""
                    : ", got '" + getter.apply(getter.apply(arguments) != null ? arguments : defaults) + "'"));
        }
    }
}
