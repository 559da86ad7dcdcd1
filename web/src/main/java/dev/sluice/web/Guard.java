package dev.sluice.web;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.metrics.OptionalMetrics;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
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
 *       and a problem body.
 * </ul>
 *
 * <p>A request of a method the route does not limit ({@code methods}), from an exempt client
 * ({@code exempt}), or of an unlimited tier proceeds untouched: not counted, the store not asked,
 * no rate-limit headers of this guard. Otherwise its tier ({@code tier}, {@code tier-limits}) or a
 * {@link LimitResolver} picks the limiter that decides it, among those built at start-up.
 *
 * <p>Immutable and thread-safe. Nothing is parsed or built per request but the caller's identity
 * and the answer. The guard never closes its limiter's store.
 */
public final class Guard {

    /** Proceed untouched: exempt, a method not limited, or an unlimited tier. */
    private static final HttpAnswer PASS = new HttpAnswer(HttpAnswer.PROCEED, List.of(), null);

    private final LimitChoice choice;
    private final CallerResolver resolver;
    private final HeaderStyle headers;
    private final boolean partitionKey;
    private final Set<String> methods;
    private final Cidr[] exempt;

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
        this(LimitChoice.fixed(limiter, sameSettingsAs(limiter), web.headers(), where), key, web, CallerRules.NONE,
                Set.of());
    }

    private Guard(LimitChoice choice, List<KeySource> key, WebSettings web, CallerRules rules, Set<String> methods) {
        this.choice = choice;
        this.resolver = new CallerResolver(key, web);
        this.headers = web.headers();
        this.partitionKey = web.partitionKey() && web.headers().draft();
        this.methods = Set.copyOf(methods);
        this.exempt = rules.exemptNetworks();
    }

    private Guard(Guard from, LimitChoice choice) {
        this.choice = choice;
        this.resolver = from.resolver;
        this.headers = from.headers;
        this.partitionKey = from.partitionKey;
        this.methods = from.methods;
        this.exempt = from.exempt;
    }

    /**
     * This guard choosing each request's limits with {@code limitResolver} instead of its tiers,
     * its own limits being the fallback; the limiters built for the resolver's lists share this
     * guard's store, failure mode, timeout and shadow mode.
     */
    public Guard withLimitResolver(LimitResolver limitResolver) {
        return new Guard(this, choice.withResolver(Objects.requireNonNull(limitResolver, "limitResolver")));
    }

    /**
     * A guard deciding the limits of {@code routes} together, atomically, on {@code store}, which
     * it never closes: one limiter, failing closed if any route does, with the timeout, shadow
     * mode and metrics of {@code web}.
     *
     * @throws IllegalArgumentException if the routes name different keys (they are decided for
     *                                  one caller) or the same policy twice
     */
    public static Guard of(List<RouteSpec> routes, WebSettings web, RateLimitStore store, String where) {
        return of(routes, web, CallerRules.NONE, store, where);
    }

    /**
     * A guard of {@code routes} as {@link #of(List, WebSettings, RateLimitStore, String)}, with
     * the tier source and exemptions of {@code rules}: one limiter per tier, built now, so that a
     * request only picks one.
     *
     * @throws IllegalArgumentException also if the routes name different {@code methods}, or name
     *                                  tiers while {@code rules} has no tier source
     */
    public static Guard of(List<RouteSpec> routes, WebSettings web, CallerRules rules, RateLimitStore store,
                           String where) {
        FailureMode failureMode = FailureMode.OPEN;
        RouteSpec first = routes.get(0);
        for (RouteSpec route : routes) {
            if (!route.key().equals(first.key())) {
                throw new IllegalArgumentException("repeated limits are decided together for one caller, so they must "
                        + "share one 'key', got '" + KeySource.format(first.key()) + "' (policy '"
                        + first.limit().policy() + "') and '" + KeySource.format(route.key()) + "' (policy '"
                        + route.limit().policy() + "')");
            }
            if (!route.methods().equals(first.methods())) {
                throw new IllegalArgumentException("repeated limits are decided together, so they must share one "
                        + "'methods', got '" + String.join(",", first.methods()) + "' (policy '" + first.limit().policy()
                        + "') and '" + String.join(",", route.methods()) + "' (policy '" + route.limit().policy() + "')");
            }
            if (route.failureMode() == FailureMode.CLOSED
                    || route.failureMode() == FailureMode.LOCAL && failureMode == FailureMode.OPEN) {
                failureMode = route.failureMode(); // the strictest: closed, then local, then open
            }
        }
        FailureMode mode = failureMode;
        Function<List<Limit>, RateLimiter> builder = limits -> RateLimiter.builder().limits(limits).store(store)
                .failureMode(mode).timeout(web.timeout()).shadowMode(web.shadow()).localShare(web.localShare())
                .listener(OptionalMetrics.listener(web.metrics(),
                        limits.stream().map(Limit::policy).collect(Collectors.joining("+"))))
                .build();
        LimitChoice choice = LimitChoice.of(routes, rules.tier(), builder, web.headers(), where);
        return new Guard(choice, first.key(), web, rules, first.methods());
    }

    /** Builds limiters of other limits with the store, failure mode, timeout and shadow mode of {@code limiter}. */
    private static Function<List<Limit>, RateLimiter> sameSettingsAs(RateLimiter limiter) {
        return limits -> RateLimiter.builder().limits(limits).store(limiter.store()).failureMode(limiter.failureMode())
                .timeout(limiter.timeout()).shadowMode(limiter.shadowMode()).localShare(limiter.localShare()).build();
    }

    /** Decides one request; see the class description. */
    public HttpAnswer check(RequestView request) {
        if (!HttpMethods.limits(methods, request.method()) || isExempt(request)) {
            return PASS;
        }
        LimitChoice.Branch branch = choice.of(request);
        if (branch.limiter() == null) {
            return PASS;
        }
        String caller = resolver.resolve(request);
        Decision decision = branch.limiter().decide(caller);
        return switch (decision.outcome()) {
            case ALLOWED, SHADOW_REJECTED, LOCAL_ALLOWED -> new HttpAnswer(HttpAnswer.PROCEED,
                    layerHeaders(request, decision, caller, branch), null);
            case FAILED_OPEN -> HttpAnswer.FAILED_OPEN;
            case REJECTED, UNSATISFIABLE, LOCAL_REJECTED -> {
                List<HttpAnswer.Header> out = new ArrayList<>(6);
                out.add(retryAfter(decision));
                out.addAll(layerHeaders(request, decision, caller, branch));
                yield new HttpAnswer(429, out, Problems.tooManyRequests(decision, headers));
            }
            case FAILED_CLOSED -> new HttpAnswer(503, List.of(retryAfter(decision)), Problems.SERVICE_UNAVAILABLE);
        };
    }

    /** Whether the client address, found as for {@code ip}, is in an {@code exempt} network. */
    private boolean isExempt(RequestView request) {
        if (exempt.length == 0) {
            return false;
        }
        byte[] client = resolver.clientBytes(request);
        for (Cidr cidr : exempt) {
            if (cidr.contains(client)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The rate-limit headers of every layer the request has so far, in this guard's style: for an
     * adapter that writes them on the way out (JAX-RS), when later layers are known.
     */
    public List<HttpAnswer.Header> headers(RequestView request) {
        return write(Layers.of(request).all());
    }

    /** The limiter of the route's own limits (the default tier), for logs and tests. */
    public RateLimiter limiter() {
        return choice.base().limiter();
    }

    /** Adds this guard's decision to the request's layers and returns the headers of them all. */
    private List<HttpAnswer.Header> layerHeaders(RequestView request, Decision decision, String caller,
                                                 LimitChoice.Branch branch) {
        Layers.Layer layer = new Layers.Layer(decision, partitionKey ? PartitionKeys.of(caller) : null,
                branch.windows(decision));
        return write(Layers.of(request).add(layer, headers));
    }

    private List<HttpAnswer.Header> write(List<Layers.Layer> layers) {
        List<HttpAnswer.Header> out = new ArrayList<>(5);
        RateLimitHeaders.write(layers, headers, (name, value) -> out.add(new HttpAnswer.Header(name, value)));
        return out;
    }

    private static HttpAnswer.Header retryAfter(Decision decision) {
        return new HttpAnswer.Header("Retry-After", Long.toString(RateLimitHeaders.retryAfterSeconds(decision)));
    }

    @Override
    public String toString() {
        return "Guard[" + choice + ", headers " + headers.configName() + "]";
    }
}
