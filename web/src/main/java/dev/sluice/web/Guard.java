package dev.sluice.web;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.metrics.OptionalMetrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The rate limit of one route (a servlet filter, a JAX-RS resource method), built once at
 * start-up: its limiter, the resolution of its callers and its header style. Per request,
 * {@link #check} resolves the caller, decides once (waiting at most the limiter's timeout) and
 * returns what the adapter answers:
 *
 * <ul>
 *   <li>allowed, or rejected in shadow mode: proceed, with the rate-limit headers of every layer
 *       of the request so far (see {@link Layers});
 *   <li>rejected: {@code 429 Too Many Requests}, {@code Retry-After} (whole seconds, rounded up, at
 *       least 1), the rate-limit headers (remaining 0) and an RFC 9457 problem body;
 *   <li>store failed, failing open: proceed without rate-limit headers (the limiter logged and
 *       counted the failure);
 *   <li>store failed, failing closed: {@code 503 Service Unavailable} with {@code Retry-After}
 *       and a problem body;
 *   <li>store failed, {@code failure-mode=local}: as allowed or rejected above, decided by the
 *       limiter's local limiter in this JVM, with the headers of its (scaled) limits.
 * </ul>
 *
 * <p>Immutable and thread-safe. Nothing is parsed or built per request but the caller's identity
 * and the answer. The guard never closes its limiter's store.
 */
public final class Guard {

    private final RateLimiter limiter;
    private final CallerResolver resolver;
    private final HeaderStyle headers;
    private final boolean partitionKey;
    private final Map<String, RateLimitHeaders.QuotaWindow> windows;
    /** The {@code q} and {@code w} of the local limiter's limits, for its decisions. */
    private final Map<String, RateLimitHeaders.QuotaWindow> localWindows;
    /** The index of a limit that the local limiter scaled, which tells its quotas apart; -1: none scaled. */
    private final int scaledIndex;

    /**
     * A guard deciding with a limiter built elsewhere, whose store, timeout, failure mode and
     * shadow mode apply; of {@code web}, the HTTP settings apply ({@code headers},
     * {@code partition-key}, {@code trusted-proxies}, {@code forwarded-header}, {@code ipv6-prefix}).
     *
     * @param limiter the limiter
     * @param key     where the caller's identity comes from, tried in order
     * @param web     the HTTP settings
     * @param where   the route, for log lines, such as {@code filter 'search'}
     */
    public Guard(RateLimiter limiter, List<KeySource> key, WebSettings web, String where) {
        this.limiter = limiter;
        this.resolver = new CallerResolver(key, web);
        this.headers = web.headers();
        this.partitionKey = web.partitionKey() && web.headers().draft();
        this.windows = RateLimitHeaders.windows(limiter.limits());
        List<Limit> local = limiter.localLimits();
        int scaled = -1;
        for (int i = local.size() - 1; i >= 0; i--) {
            scaled = local.get(i) != limiter.limits().get(i) ? i : scaled;
        }
        this.scaledIndex = scaled;
        this.localWindows = scaled < 0 ? windows : RateLimitHeaders.windows(local);
        RateLimitHeaders.warnOfNonTokenPolicies(limiter.limits(), headers, where);
    }

    /**
     * A guard deciding the limits of {@code routes} together, atomically, on {@code store}, which
     * it never closes: one limiter, failing closed if any route does, else deciding locally if any
     * route does, else failing open; with the timeout, shadow mode, metrics and local share of
     * {@code web}.
     *
     * @throws IllegalArgumentException if the routes name different keys (they are decided for
     *                                  one caller) or the same policy twice
     */
    public static Guard of(List<RouteSpec> routes, WebSettings web, RateLimitStore store, String where) {
        List<Limit> limits = new ArrayList<>();
        FailureMode failureMode = FailureMode.OPEN;
        RouteSpec first = routes.get(0);
        for (RouteSpec route : routes) {
            if (!route.key().equals(first.key())) {
                throw new IllegalArgumentException("repeated limits are decided together for one caller, so they must "
                        + "share one 'key', got '" + KeySource.format(first.key()) + "' (policy '"
                        + first.limit().policy() + "') and '" + KeySource.format(route.key()) + "' (policy '"
                        + route.limit().policy() + "')");
            }
            limits.add(route.limit());
            if (route.failureMode() == FailureMode.CLOSED
                    || route.failureMode() == FailureMode.LOCAL && failureMode == FailureMode.OPEN) {
                failureMode = route.failureMode(); // the strictest: closed, then local, then open
            }
        }
        String name = limits.stream().map(Limit::policy).collect(Collectors.joining("+"));
        RateLimiter limiter = RateLimiter.builder().limits(limits).store(store).failureMode(failureMode)
                .timeout(web.timeout()).shadowMode(web.shadow()).listener(OptionalMetrics.listener(web.metrics(), name))
                .localShare(web.localShare()).build();
        return new Guard(limiter, first.key(), web, where);
    }

    /** Decides one request; see the class description. */
    public HttpAnswer check(RequestView request) {
        String caller = resolver.resolve(request);
        Decision decision = limiter.decide(caller);
        return switch (decision.outcome()) {
            case ALLOWED, SHADOW_REJECTED, LOCAL_ALLOWED -> new HttpAnswer(HttpAnswer.PROCEED, layerHeaders(request, decision, caller),
                    null);
            case FAILED_OPEN -> HttpAnswer.FAILED_OPEN;
            case REJECTED, UNSATISFIABLE, LOCAL_REJECTED -> {
                List<HttpAnswer.Header> out = new ArrayList<>(6);
                out.add(retryAfter(decision));
                out.addAll(layerHeaders(request, decision, caller));
                yield new HttpAnswer(429, out, Problems.tooManyRequests(decision, headers));
            }
            case FAILED_CLOSED -> new HttpAnswer(503, List.of(retryAfter(decision)), Problems.SERVICE_UNAVAILABLE);
        };
    }

    /**
     * The rate-limit headers of every layer the request has so far, in this guard's style: for an
     * adapter that writes them on the way out (JAX-RS), when later layers are known.
     */
    public List<HttpAnswer.Header> headers(RequestView request) {
        return write(Layers.of(request).all());
    }

    /** The limiter, for logs and tests. */
    public RateLimiter limiter() {
        return limiter;
    }

    /** Adds this guard's decision to the request's layers and returns the headers of them all. */
    private List<HttpAnswer.Header> layerHeaders(RequestView request, Decision decision, String caller) {
        Layers.Layer layer = new Layers.Layer(decision, partitionKey ? PartitionKeys.of(caller) : null,
                isLocal(decision) ? localWindows : windows);
        return write(Layers.of(request).add(layer, headers));
    }

    private List<HttpAnswer.Header> write(List<Layers.Layer> layers) {
        List<HttpAnswer.Header> out = new ArrayList<>(5);
        RateLimitHeaders.write(layers, headers, (name, value) -> out.add(new HttpAnswer.Header(name, value)));
        return out;
    }

    /**
     * Whether the local limiter decided with limits of its own: its quotas carry its scaled limit
     * instances (a local rejection that shadow mode let through too, whose outcome no longer says so).
     */
    private boolean isLocal(Decision decision) {
        return scaledIndex >= 0 && decision.quotas().size() > scaledIndex
                && decision.quotas().get(scaledIndex).limit() == limiter.localLimits().get(scaledIndex);
    }

    private static HttpAnswer.Header retryAfter(Decision decision) {
        return new HttpAnswer.Header("Retry-After", Long.toString(RateLimitHeaders.retryAfterSeconds(decision)));
    }

    @Override
    public String toString() {
        return "Guard[" + limiter + ", headers " + headers.configName() + "]";
    }
}
