package dev.sluice.gateway;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.web.HeaderStyle;

import java.math.BigInteger;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rate-limit headers of a route's decisions, with the names and values every Sluice adapter
 * sends, so that a client reads a gateway route and a servlet route alike.
 *
 * <p>{@code legacy}: {@code RateLimit-Limit} (the binding limit's capacity), {@code RateLimit-Remaining}
 * and {@code RateLimit-Reset} of the <em>binding</em> limit: of the limits that refused the request
 * the one with the longest wait, else the one with the least remaining. {@code RateLimit-Reset} is
 * the time until more quota comes, the {@code t} of the draft: until one more unit for an admitting
 * limit, until this request could pass for a refusing one (so on a refusal it equals
 * {@code Retry-After}).
 *
 * <p>{@code draft-10} (draft-ietf-httpapi-ratelimit-headers-10): {@code RateLimit-Policy:
 * "name";q=100;w=60} and {@code RateLimit: "name";r=7;t=2}, one member per limit; a sub-second
 * period is published as the equivalent whole-second policy ({@code 20/500ms} is {@code q=40;w=1}).
 *
 * <p>A refusing limit reports remaining 0. Immutable and thread-safe.
 */
final class GatewayHeaders {

    /** The largest delay-seconds a structured-field integer (15 digits) holds. */
    private static final long SF_INTEGER_MAX = 999_999_999_999_999L;

    private final HeaderStyle style;
    /** Each limit's draft {@code q} and {@code w}, by policy, computed once. */
    private final Map<String, long[]> windows;

    GatewayHeaders(HeaderStyle style, List<Limit> limits) {
        this.style = style;
        Map<String, long[]> byPolicy = new HashMap<>();
        for (Limit limit : limits) {
            byPolicy.put(limit.policy(), quotaWindow(limit));
        }
        this.windows = Map.copyOf(byPolicy);
    }

    /** The headers of an admitted request. */
    Map<String, String> of(Decision decision) {
        Map<String, String> headers = new LinkedHashMap<>();
        add(decision, headers);
        return headers;
    }

    /** The headers of a refused request: {@code Retry-After} first, then the rate-limit headers. */
    Map<String, String> refusal(Decision decision) {
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Retry-After", retryAfter(decision));
        add(decision, headers);
        return headers;
    }

    /** The {@code Retry-After} value: whole seconds, rounded up, at least 1. */
    static String retryAfter(Decision decision) {
        return Long.toString(Math.max(1, ceilSeconds(decision.retryAfter())));
    }

    private void add(Decision decision, Map<String, String> headers) {
        if (style == HeaderStyle.NONE || decision.quotas().isEmpty()) {
            return;
        }
        if (style.legacy()) {
            Decision.Quota binding = null;
            for (Decision.Quota quota : decision.quotas()) {
                if (binding == null || (binding.allowed()
                        ? !quota.allowed() || quota.remaining() < binding.remaining()
                        : !quota.allowed() && quota.retryAfter().compareTo(binding.retryAfter()) > 0)) {
                    binding = quota;
                }
            }
            headers.put("RateLimit-Limit", Long.toString(binding.limit().capacity()));
            headers.put("RateLimit-Remaining", Long.toString(binding.allowed() ? binding.remaining() : 0));
            headers.put("RateLimit-Reset", Long.toString(Math.min(SF_INTEGER_MAX, resetSeconds(binding))));
        }
        if (style.draft()) {
            StringBuilder policies = new StringBuilder();
            StringBuilder limits = new StringBuilder();
            for (Decision.Quota quota : decision.quotas()) {
                if (policies.length() > 0) {
                    policies.append(", ");
                    limits.append(", ");
                }
                String policy = quota.limit().policy();
                long[] qw = windows.get(policy);
                if (qw == null) { // a limit the route was not built with: never in a running gateway
                    qw = quotaWindow(quota.limit());
                }
                policies.append('"').append(policy).append("\";q=").append(qw[0]).append(";w=").append(qw[1]);
                limits.append('"').append(policy).append("\";r=").append(quota.allowed() ? quota.remaining() : 0);
                long t = resetSeconds(quota);
                if (t <= SF_INTEGER_MAX) {
                    limits.append(";t=").append(t);
                }
            }
            headers.put("RateLimit-Policy", policies.toString());
            headers.put("RateLimit", limits.toString());
        }
    }

    /** For an admitting limit the time until one more unit; for a refusing one, until this request could pass. */
    private static long resetSeconds(Decision.Quota quota) {
        return quota.allowed() ? ceilSeconds(quota.nextUnit()) : Math.max(1, ceilSeconds(quota.retryAfter()));
    }

    /** Whole seconds, rounded up; saturates rather than overflowing for {@link Decision#NEVER}. */
    private static long ceilSeconds(Duration d) {
        long seconds = d.getSeconds();
        return d.getNano() > 0 && seconds < Long.MAX_VALUE ? seconds + 1 : seconds;
    }

    /**
     * The draft's {@code q} and {@code w} of a limit: its capacity over the time its rate takes to
     * grant it ({@code 1/s burst 5} is {@code q=5;w=5}), so that {@code r} never exceeds {@code q};
     * a window that is not whole seconds becomes the same rate over the shortest whole-second
     * multiple of the period, up to an hour, else the window rounded up and {@code q} rounded down.
     */
    static long[] quotaWindow(Limit limit) {
        long capacity = limit.capacity();
        long period = limit.periodMicros();
        BigInteger[] window = BigInteger.valueOf(capacity).multiply(BigInteger.valueOf(period))
                .divideAndRemainder(BigInteger.valueOf(limit.count()));
        BigInteger micros = BigInteger.valueOf(1_000_000);
        if (window[1].signum() == 0 && window[0].mod(micros).signum() == 0) {
            return new long[] {capacity, Math.max(1, window[0].divide(micros).longValue())};
        }
        long step = period / gcd(period, 1_000_000);
        long least = Math.max(1, window[0].add(BigInteger.valueOf(999_999)).divide(micros)
                .min(BigInteger.valueOf(Long.MAX_VALUE / 2_000_000)).longValue());
        long w = ((least + step - 1) / step) * step;
        if (step <= 3_600 && w <= 3_600) {
            return new long[] {limit.count() * (w * 1_000_000 / period), w};
        }
        return new long[] {Math.max(1, (long) Math.floor((double) limit.count() * least * 1_000_000 / period)), least};
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }
}
