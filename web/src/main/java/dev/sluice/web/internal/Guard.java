package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.RequestAttributes;
import dev.sluice.web.RequestView;
import dev.sluice.ConcurrencyLimiter;
import dev.sluice.Decision;
import dev.sluice.Lease;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.RateLimiter;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

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
 * <p>A route may also cap the caller's requests in flight ({@code algorithm=concurrency}): after
 * its rate limits admitted the request, it takes a lease, and a refused lease answers
 * {@code 429} (a concurrency limit publishes no rate-limit headers of its own) and refunds the
 * rate limits, so that the request is charged by neither; a request the rate limits refuse takes
 * no lease. With {@code charge=after} the rate limits are refunded once the response shows a
 * status that is not charged. Both happen in the answer's {@link AfterResponse}, which the adapter
 * calls when the response is complete.
 *
 * <p>Every request it decides carries the request attributes of {@link RequestAttributes}
 * (outcome, binding policy, remaining, partition key), set before the answer is returned. A
 * {@link KeyResolver} may name callers before the key sources.
 *
 * <p>Immutable and thread-safe. Nothing is parsed or built per request but the caller's identity
 * and the answer. The guard never closes its limiter's store.
 */
public final class Guard {

    /** Proceed untouched: exempt, a method not limited, or an unlimited tier without a cap. */
    private static final HttpAnswer PASS = new HttpAnswer(HttpAnswer.PROCEED, List.of(), null);
    /** The outcomes as {@link RequestAttributes#OUTCOME} (and the metrics) name them. */
    private static final String[] OUTCOMES = Arrays.stream(Decision.Outcome.values())
            .map(o -> o.name().toLowerCase(Locale.ROOT)).toArray(String[]::new);
    /** Shadow mode logs a would-be rejection at most this often per route. */
    private static final long SHADOW_LOG_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final Logger LOG = LoggerFactory.getLogger(Guard.class);

    /** The route's rate limits per tier as configured, or {@code null} when it has only a concurrency limit. */
    private final LimitChoice configured;
    /** The rate limits deciding now: {@link #configured}, or with an operator's overrides. */
    private volatile LimitChoice choice;
    /** What the route decided, for the console. */
    private final Traffic traffic = new Traffic();
    /** The route's concurrency limit, or {@code null}. */
    private final ConcurrencyLimiter concurrency;
    private final Charging charging;
    private final CallerResolver resolver;
    /** The application's own caller resolution, tried before the key sources; {@code null}: none. */
    private final KeyResolver keyResolver;
    private final HeaderStyle headers;
    private final boolean partitionKey;
    private final Set<String> methods;
    private final Cidr[] exempt;
    /** The route, for log lines, such as {@code filter 'search'}. */
    private final String where;
    private final LongAdder shadowRejections = new LongAdder();
    private final AtomicLong shadowLogged = new AtomicLong(System.nanoTime() - SHADOW_LOG_NANOS);

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
        this(LimitChoice.fixed(limiter, limiter::withLimits, web.headers(), where), null, Charging.BEFORE, key, web,
                Set.of(), where);
    }

    private Guard(LimitChoice choice, ConcurrencyLimiter concurrency, Charging charging, List<KeySource> key,
                  WebSettings web, Set<String> methods, String where) {
        this.configured = choice;
        this.choice = choice;
        this.concurrency = concurrency;
        this.charging = charging;
        this.resolver = new CallerResolver(key, web, where);
        this.keyResolver = null;
        this.headers = web.headers();
        this.partitionKey = web.partitionKey() && web.headers().draft();
        this.methods = Set.copyOf(methods);
        this.exempt = web.callers().exempt().toArray(new Cidr[0]);
        this.where = where;
    }

    private Guard(Guard from, LimitChoice choice, CallerResolver resolver, KeyResolver keyResolver) {
        this.configured = choice;
        this.choice = choice;
        this.concurrency = from.concurrency;
        this.charging = from.charging;
        this.resolver = resolver;
        this.keyResolver = keyResolver;
        this.headers = from.headers;
        this.partitionKey = from.partitionKey;
        this.methods = from.methods;
        this.exempt = from.exempt;
        this.where = from.where;
    }

    /**
     * This guard choosing each request's limits with {@code limitResolver} instead of its tiers,
     * its own limits being the fallback; the limiters built for the resolver's lists share this
     * guard's store, failure mode, timeout and shadow mode.
     */
    public Guard withLimitResolver(LimitResolver limitResolver) {
        if (configured == null) {
            throw new IllegalStateException("a route with only a concurrency limit has no rate limits to resolve");
        }
        return new Guard(this, configured.withResolver(Objects.requireNonNull(limitResolver, "limitResolver")), resolver,
                keyResolver);
    }

    /**
     * This guard logging its once-only warnings about requests (a forwarding header from a
     * loopback or private peer that is not in {@code trusted-proxies}) at most once together with
     * {@code other}: the guards of one JAX-RS feature, one per resource method, warn once for all.
     */
    public Guard sharingWarningsWith(Guard other) {
        return new Guard(this, configured, resolver.sharingWarningWith(other.resolver), keyResolver);
    }

    /**
     * This guard asking {@code keyResolver} for each request's caller first; where it names none,
     * the {@code key} sources decide. Its callers are identities of their own ({@code app~...}),
     * apart from those of the key sources.
     */
    public Guard withKeyResolver(KeyResolver keyResolver) {
        return new Guard(this, configured, resolver, Objects.requireNonNull(keyResolver, "keyResolver"));
    }

    /**
     * A guard deciding the limits of {@code routes} together, atomically, on {@code store}, which
     * it never closes: one limiter per tier of {@code web}'s tier source, built now, so that a
     * request only picks one, with the strictest failure mode of the routes (closed, then local,
     * then open), the timeout, shadow mode, metrics and caller rules of {@code web}. A route of
     * {@code algorithm=concurrency} becomes the guard's concurrency limit (failing closed on a
     * closed route or beside one, as its own route says otherwise; never locally), the others its
     * rate limits, which must agree on {@code charge} and {@code charge-when}.
     *
     * @throws IllegalArgumentException if the routes name different keys (they are decided for
     *                                  one caller) or the same policy twice, name different
     *                                  {@code methods}, name tiers while {@code web} has no tier
     *                                  source, name two concurrency limits, charge differently, or
     *                                  a concurrency limit says {@code failure-mode=local}
     */
    public static Guard of(List<RouteSpec> routes, WebSettings web, RateLimitStore store, String where) {
        return of(routes, web, store, where, null);
    }

    /**
     * A guard as {@link #of(List, WebSettings, RateLimitStore, String)}, publishing its metrics
     * ({@code metrics=true}) to {@code meterRegistry}, the application's Micrometer
     * {@code MeterRegistry}; {@code null}: Micrometer's global registry.
     *
     * @throws IllegalArgumentException also if {@code meterRegistry} is not a {@code MeterRegistry}
     */
    public static Guard of(List<RouteSpec> routes, WebSettings web, RateLimitStore store, String where,
                           Object meterRegistry) {
        RouteGroup group = RouteGroup.of(routes);
        LimitChoice choice = group.rateLimits(web, web.callers().tier(), store, meterRegistry, where);
        ConcurrencyLimiter concurrency = group.concurrency(web, store, meterRegistry);
        return new Guard(choice, concurrency, group.charging(), group.key(), web, group.methods(), where);
    }

    /** Decides one request; see the class description. */
    public HttpAnswer check(RequestView request) {
        if (!HttpMethods.limits(methods, request.method())) {
            return PASS;
        }
        // Found at most once per request: by the exemption if there is one, else by the key sources if they ask.
        byte[] client = CallerResolver.UNRESOLVED;
        if (exempt.length > 0) {
            client = resolver.clientBytes(request);
            if (Cidr.anyContains(exempt, client)) {
                return PASS;
            }
        }
        LimitChoice current = choice;
        LimitChoice.Branch branch = current == null ? LimitChoice.UNLIMITED : current.of(request);
        RateLimiter limiter = branch.limiter();
        if (limiter == null && concurrency == null) {
            return PASS;
        }
        String caller = caller(request, client);
        String partition = PartitionKeys.of(caller); // once: the attribute, the log and the draft's pk; cached per caller
        Decision decision = limiter == null ? null : limiter.decide(caller);
        if (decision != null && !decision.allowed()) {
            note(request, decision, limiter, caller, partition);
            return refusal(request, decision, partition, branch);
        }
        Lease lease = concurrency == null ? null : concurrency.acquire(caller);
        if (lease != null && !lease.decision().allowed()) {
            // All or nothing: a request refused its place is not charged by the rate limits either.
            if (decision != null && decision.outcome() == Decision.Outcome.ALLOWED) {
                limiter.refund(caller);
            }
            Decision refused = lease.decision();
            note(request, refused, null, caller, partition);
            if (refused.outcome() == Decision.Outcome.FAILED_CLOSED) {
                return refusal(request, refused, partition, branch);
            }
            List<HttpAnswer.Header> out = new ArrayList<>(6);
            out.add(retryAfter(refused));
            out.addAll(headers(request));
            return HttpAnswer.refusal(429, out, Problems.tooManyInFlight(refused), refused);
        }
        note(request, decision != null ? decision : lease.decision(), decision != null ? limiter : null, caller, partition);
        AfterResponse completion = completion(limiter, caller, decision, lease);
        if (decision == null || decision.outcome() == Decision.Outcome.FAILED_OPEN) {
            return completion == AfterResponse.NONE ? HttpAnswer.FAILED_OPEN
                    : new HttpAnswer(HttpAnswer.PROCEED, List.of(), null, completion);
        }
        return new HttpAnswer(HttpAnswer.PROCEED, layerHeaders(request, decision, partition, branch), null, completion);
    }

    /**
     * The caller: the application's {@link KeyResolver} if it names one, else the key sources',
     * with the client address {@code client} or {@link CallerResolver#UNRESOLVED}.
     */
    private String caller(RequestView request, byte[] client) {
        if (keyResolver != null) {
            String own = keyResolver.caller(request);
            if (own != null && !own.isBlank()) {
                return "app~" + own;
            }
        }
        return resolver.resolve(request, client);
    }

    /** The answer to a request its rate limits refused, or whose store failed on a closed route. */
    private HttpAnswer refusal(RequestView request, Decision decision, String partition, LimitChoice.Branch branch) {
        if (decision.outcome() == Decision.Outcome.FAILED_CLOSED) {
            return HttpAnswer.refusal(503, List.of(retryAfter(decision)), Problems.SERVICE_UNAVAILABLE, decision);
        }
        List<HttpAnswer.Header> out = new ArrayList<>(6);
        out.add(retryAfter(decision));
        out.addAll(layerHeaders(request, decision, partition, branch));
        return HttpAnswer.refusal(429, out, Problems.tooManyRequests(decision, headers), decision);
    }

    /**
     * Puts what was decided on the request ({@link RequestAttributes}) and logs a rejection shadow
     * mode let through, naming the route, the policy and the caller by its partition key.
     *
     * @param limiter the rate limiter that decided; {@code null}: the concurrency limiter
     */
    private void note(RequestView request, Decision decision, RateLimiter limiter, String caller, String partition) {
        traffic.record(decision.outcome(), caller, partition);
        Decision.Quota binding = decision.binding();
        // Named (and joined) only when the store could not decide: no string built per request.
        String policy = binding != null ? binding.limit().policy()
                : limiter != null ? limiter.name() : concurrency.limit().policy();
        request.setAttribute(RequestAttributes.OUTCOME, OUTCOMES[decision.outcome().ordinal()]);
        request.setAttribute(RequestAttributes.POLICY, policy);
        request.setAttribute(RequestAttributes.REMAINING, binding == null ? null : binding.remaining());
        request.setAttribute(RequestAttributes.PARTITION, partition);
        if (decision.outcome() == Decision.Outcome.SHADOW_REJECTED) {
            shadowRejections.increment();
            long now = System.nanoTime();
            long last = shadowLogged.get();
            if (now - last >= SHADOW_LOG_NANOS && shadowLogged.compareAndSet(last, now)) {
                LOG.info("{}: shadow mode let through a request policy '{}' would have rejected, of caller {} ({} "
                        + "so far on this route)", where, policy, partition, shadowRejections.sum());
            }
        }
    }

    /**
     * What is left to do when the response is complete: return the lease, and with
     * {@code charge=after} refund a request the store charged whose status is not charged (a
     * request decided by the local limiter while the store failed stays charged there).
     */
    private AfterResponse completion(RateLimiter limiter, String caller, Decision decision, Lease lease) {
        boolean refund = charging.after() && decision != null && decision.outcome() == Decision.Outcome.ALLOWED;
        boolean release = lease != null && lease.held();
        if (!refund && !release) {
            return AfterResponse.NONE;
        }
        return AfterResponse.once(status -> {
            try {
                if (release) {
                    lease.release();
                }
            } finally {
                if (refund && !charging.counts(status)) {
                    limiter.refund(caller);
                }
            }
        });
    }

    /**
     * The rate-limit headers of every layer the request has so far, in this guard's style: for an
     * adapter that writes them on the way out (JAX-RS), when later layers are known.
     */
    public List<HttpAnswer.Header> headers(RequestView request) {
        return write(Layers.of(request).all());
    }

    /**
     * The limiter of the route's own rate limits (the default tier), for logs and tests;
     * {@code null} when the route has only a concurrency limit.
     */
    public RateLimiter limiter() {
        LimitChoice current = choice;
        return current == null ? null : current.base().limiter();
    }

    /** The concurrency limiter, for logs and tests; {@code null} when the route has none. */
    public ConcurrencyLimiter concurrencyLimiter() {
        return concurrency;
    }

    /**
     * Applies an operator's overrides from now on: each rate limit of the route and of its tiers
     * becomes {@code override}'s answer for its configured self ({@link UnaryOperator#identity()}:
     * the configuration again). See {@link LimitChoice#withOverrides}.
     */
    void override(UnaryOperator<Limit> override) {
        if (configured != null) {
            LimitChoice was = choice;
            LimitChoice now = configured.withOverrides(override);
            choice = now;
            now.replacing(was);
        }
    }

    /** The rate limits as configured; {@code null} when the route has only a concurrency limit. */
    LimitChoice configuredChoice() {
        return configured;
    }

    /** The rate limits deciding now; {@code null} when the route has only a concurrency limit. */
    LimitChoice currentChoice() {
        return choice;
    }

    /**
     * The identities a caller given as a client sends it may have on this route: with a
     * {@link KeyResolver}, its {@code app~} identity (the value itself when it is one already, as
     * the console lists it), then those of the key sources ({@link CallerResolver#identitiesOf}).
     */
    List<String> identitiesOf(String sent) {
        List<String> sources = resolver.identitiesOf(sent);
        String value = sent.trim();
        if (keyResolver == null || value.isEmpty()) {
            return sources;
        }
        java.util.LinkedHashSet<String> out = new java.util.LinkedHashSet<>();
        if (value.startsWith("app~") && value.length() > 4) {
            out.add(value);
        }
        out.add("app~" + value);
        out.addAll(sources);
        return List.copyOf(out);
    }

    /** How the route finds its callers; a {@link KeyResolver}'s are its own and not here. */
    CallerResolver resolver() {
        return resolver;
    }

    /** What the route decided. */
    Traffic traffic() {
        return traffic;
    }

    /** The route, such as {@code filter 'search'}. */
    String where() {
        return where;
    }

    /** Adds this guard's decision to the request's layers and returns the headers of them all. */
    private List<HttpAnswer.Header> layerHeaders(RequestView request, Decision decision, String partition,
                                                 LimitChoice.Branch branch) {
        Layers.Layer layer = new Layers.Layer(decision, partitionKey ? partition : null,
                branch.windows(decision));
        return write(Layers.of(request).add(layer, headers));
    }

    private List<HttpAnswer.Header> write(List<Layers.Layer> layers) {
        return RateLimitHeaders.headers(layers, headers);
    }

    private static HttpAnswer.Header retryAfter(Decision decision) {
        return new HttpAnswer.Header("Retry-After", RateLimitHeaders.decimal(RateLimitHeaders.retryAfterSeconds(decision)));
    }

    @Override
    public String toString() {
        return "Guard[" + (choice == null ? "" : choice + ", ") + (concurrency == null ? "" : concurrency + ", ")
                + (charging.after() ? charging + ", " : "") + "headers " + headers.configName() + "]";
    }
}
