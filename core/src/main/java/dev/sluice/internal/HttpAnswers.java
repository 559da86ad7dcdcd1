package dev.sluice.internal;

import dev.sluice.Decision;
import dev.sluice.SluiceConfig.HeaderStyle;

import java.time.Duration;
import java.util.function.BiConsumer;

/**
 * The HTTP side of a decision, shared by the servlet filter and the JAX-RS feature: the
 * rate-limit headers, {@code Retry-After}, and the RFC 9457 problem bodies of 429 and 503.
 *
 * <p>{@code legacy} headers are {@code RateLimit-Limit} (the most the binding limit can grant at
 * once: its burst for a bucket, its count for a window), {@code RateLimit-Remaining} and
 * {@code RateLimit-Reset} (seconds, rounded up) of the binding limit. {@code draft} headers follow
 * the IETF httpapi RateLimit draft: {@code RateLimit-Policy: "name";q=100;w=60, ...} for every
 * limit and {@code RateLimit: "name";r=7;t=12} for the binding one. Nothing from the request is
 * ever written into a header or a body: policy names are validated at start-up.
 *
 * <p>Not API: this package may change in any release.
 */
public final class HttpAnswers {

    /** The media type of problem bodies. */
    public static final String PROBLEM_JSON = "application/problem+json";

    private HttpAnswers() {
    }

    /** Whole seconds, rounded up; saturates rather than overflowing for {@link Decision#NEVER}. */
    public static long ceilSeconds(Duration d) {
        long seconds = d.getSeconds();
        return d.getNano() > 0 && seconds < Long.MAX_VALUE ? seconds + 1 : seconds;
    }

    /** The {@code Retry-After} value: whole seconds, rounded up, at least 1. */
    public static long retryAfterSeconds(Decision decision) {
        return Math.max(1, ceilSeconds(decision.retryAfter()));
    }

    /**
     * Writes the rate-limit headers of a decided request (none when the store failed). A rejected
     * request, or one let through by shadow mode, reports remaining 0, as the documented header
     * contract says: the binding limit may still hold a few units when the request cost more than
     * that, but none is available to this request.
     */
    public static void writeHeaders(Decision decision, HeaderStyle style, BiConsumer<String, String> header) {
        Decision.Quota binding = decision.binding();
        if (binding == null || style == HeaderStyle.NONE) {
            return;
        }
        long remaining = decision.outcome() == Decision.Outcome.ALLOWED ? binding.remaining() : 0;
        if (style.legacy()) {
            header.accept("RateLimit-Limit", Long.toString(binding.limit().capacity()));
            header.accept("RateLimit-Remaining", Long.toString(remaining));
            header.accept("RateLimit-Reset", Long.toString(ceilSeconds(binding.reset())));
        }
        if (style.draft()) {
            StringBuilder policies = new StringBuilder();
            for (Decision.Quota quota : decision.quotas()) {
                if (policies.length() > 0) {
                    policies.append(", ");
                }
                policies.append('"').append(quota.limit().policy()).append("\";q=").append(quota.limit().capacity())
                        .append(";w=").append(windowSeconds(quota.limit()));
            }
            header.accept("RateLimit-Policy", policies.toString());
            header.accept("RateLimit", "\"" + binding.limit().policy() + "\";r=" + remaining + ";t="
                    + ceilSeconds(binding.reset()));
        }
    }

    /**
     * The draft's window for a quota of {@link dev.sluice.Limit#capacity()} units: the period, or
     * for a bucket whose burst differs from its count, the time the rate takes to grant the whole
     * burst ({@code 1/s burst 5} is {@code q=5;w=5}), so that {@code r} never exceeds {@code q}.
     */
    static long windowSeconds(dev.sluice.Limit limit) {
        long micros = limit.capacity() == limit.count() ? limit.periodMicros()
                : (long) Math.ceil((double) limit.capacity() * limit.periodMicros() / limit.count());
        return Math.max(1, (micros + 999_999) / 1_000_000);
    }

    /** The 429 body. */
    public static String tooManyRequests(Decision decision) {
        Decision.Quota binding = decision.binding();
        if (decision.outcome() == Decision.Outcome.UNSATISFIABLE) {
            return problem(429, "Too Many Requests",
                    "This request costs more than the rate limit can ever grant.", null);
        }
        String policy = binding == null ? null : binding.limit().policy();
        return problem(429, "Too Many Requests", "Rate limit exceeded"
                + (policy == null ? "" : " for policy '" + policy + "'") + "; retry after "
                + retryAfterSeconds(decision) + " s.", policy);
    }

    /** The 503 body of a fail-closed route whose store could not decide. */
    public static String serviceUnavailable() {
        return problem(503, "Service Unavailable", "The rate limiter cannot decide right now; retry shortly.", null);
    }

    private static String problem(int status, String title, String detail, String policy) {
        // Policy names are limited to [A-Za-z0-9._~-] at start-up; nothing here needs escaping.
        return "{\"type\":\"about:blank\",\"title\":\"" + title + "\",\"status\":" + status + ",\"detail\":\"" + detail
                + "\"" + (policy == null ? "" : ",\"policy\":\"" + policy + "\"") + "}";
    }
}
