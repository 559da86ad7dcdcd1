package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.Decision;

import java.util.ArrayList;
import java.util.List;

/**
 * The RFC 9457 {@code application/problem+json} bodies of 429 and 503. On 429 with
 * {@code draft-10}, the draft's problem type of section 5.1, {@code quota-exceeded}, with
 * {@code violated-policies} naming the limits that refused the request; otherwise
 * {@code about:blank} ({@code both} keeps the body of {@code legacy}).
 *
 * <p>Nothing from the request is ever written into a body: policy names are validated at start-up.
 */
final class Problems {

    /** The draft's problem type for a request over one or more quota policies (draft-10 section 5.1). */
    static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

    /** The 503 body of a fail-closed route whose store could not decide. */
    static final String SERVICE_UNAVAILABLE = problem("about:blank", 503, "Service Unavailable",
            "The rate limiter cannot decide right now; retry shortly.", null, "");

    private Problems() {
    }

    /** The 429 body in {@code legacy} form (problem type {@code about:blank}). */
    static String tooManyRequests(Decision decision) {
        return tooManyRequests(decision, HeaderStyle.LEGACY);
    }

    /**
     * The 429 body: with {@code draft-10} headers, the draft's {@code quota-exceeded} problem type
     * listing in {@code violated-policies} every limit that refused the request; otherwise
     * ({@code legacy}, {@code none}, and {@code both}, whose bodies stay what they were before the
     * draft defined problem types) {@code about:blank}.
     * (An unsatisfiable cost, which only a cost given in Java can be, is decided without the
     * store: its list is empty.)
     */
    static String tooManyRequests(Decision decision, HeaderStyle style) {
        List<String> violated = new ArrayList<>();
        for (Decision.Quota quota : decision.quotas()) {
            if (!quota.allowed()) {
                violated.add(quota.limit().policy());
            }
        }
        boolean draft = style == HeaderStyle.DRAFT;
        String type = draft ? QUOTA_EXCEEDED : "about:blank";
        String title = draft ? "Quota Exceeded" : "Too Many Requests";
        String extra = draft ? ",\"violated-policies\":[" + String.join(",", violated.stream()
                .map(p -> "\"" + p + "\"").toList()) + "]" : "";
        if (decision.outcome() == Decision.Outcome.UNSATISFIABLE) {
            return problem(type, 429, title, "This request costs more than the rate limit can ever grant.", null,
                    extra);
        }
        Decision.Quota binding = decision.binding();
        String policy = binding == null ? null : binding.limit().policy();
        return problem(type, 429, title, "Rate limit exceeded"
                + (policy == null ? "" : " for policy '" + policy + "'") + "; retry after "
                + RateLimitHeaders.retryAfterSeconds(decision) + " s.", policy, extra);
    }

    /**
     * The 429 body of a request refused by a concurrency limit ({@code algorithm=concurrency}): not
     * a quota policy of the draft, so {@code about:blank} in every header style.
     */
    static String tooManyInFlight(Decision decision) {
        Decision.Quota binding = decision.binding();
        String policy = binding == null ? null : binding.limit().policy();
        return problem("about:blank", 429, "Too Many Requests", "Too many requests in flight"
                + (policy == null ? "" : " for policy '" + policy + "'") + "; retry after "
                + RateLimitHeaders.retryAfterSeconds(decision) + " s.", policy, "");
    }

    private static String problem(String type, int status, String title, String detail, String policy, String extra) {
        // Policy names are limited to the policy character set at start-up; nothing here needs escaping.
        return "{\"type\":\"" + type + "\",\"title\":\"" + title + "\",\"status\":" + status + ",\"detail\":\"" + detail
                + "\"" + (policy == null ? "" : ",\"policy\":\"" + policy + "\"") + extra + "}";
    }
}
