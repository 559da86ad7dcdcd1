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

import java.util.List;
import java.util.function.UnaryOperator;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

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
    private static final CompletionStage<HttpAnswer> PASSED = CompletableFuture.completedStage(
            new HttpAnswer(HttpAnswer.PROCEED, List.of(), null));

    static {
        PartitionKeys.ready(); // its secret is drawn when the first route is built, not on a request's thread
    }

    /** The route's rate limits per tier as configured, or {@code null} when it has only a concurrency limit. */
    private final LimitChoice configured;
    /** The rate limits deciding now: {@link #configured}, or with an operator's overrides. */
    private volatile LimitChoice choice;
    /** What the route decided: the request attributes, the console's traffic, the shadow-mode log. */
    private final Outcomes outcomes;
    /** The route's concurrency limit, or {@code null}. */
    private final ConcurrencyLimiter concurrency;
    private final Charging charging;
    private final CallerResolver resolver;
    /** The application's own caller resolution, tried before the key sources; {@code null}: none. */
    private final KeyResolver keyResolver;
    private final HeaderStyle headers;
    private final Answers answers;
    private final Set<String> methods;
    private final Cidr[] exempt;
    /** The route, for log lines, such as {@code filter 'search'}. */
    private final String where;

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
        this.answers = new Answers(web.headers(), web.partitionKey() && web.headers().draft());
        this.outcomes = new Outcomes(where);
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
        this.answers = from.answers;
        this.outcomes = new Outcomes(from.where);
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
        return new Guard(this, configured.withResolver(Objects.requireNonNull(limitResolver, "limitResolver")),
                resolver, keyResolver);
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

    /**
     * Decides one request, waiting at most the limiters' timeout on this thread; see the class
     * description and {@link #checkAsync}.
     */
    public HttpAnswer check(RequestView request) {
        try {
            return checkAsync(request).toCompletableFuture().join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    /**
     * Decides one request without blocking a thread; see the class description. The stage
     * completes within the limiters' timeout and never exceptionally but for a failure of the
     * request's own code (a {@link KeyResolver}, the view); one that waited on the store completes
     * on the limiters' executor, having set the request's attributes there.
     */
    public CompletionStage<HttpAnswer> checkAsync(RequestView request) {
        if (!HttpMethods.limits(methods, request.method())) {
            return PASSED;
        }
        // Found at most once per request: by the exemption if there is one, else by the key sources if they ask.
        byte[] client = CallerResolver.UNRESOLVED;
        if (exempt.length > 0) {
            client = resolver.clientBytes(request);
            if (Cidr.anyContains(exempt, client)) {
                return PASSED;
            }
        }
        LimitChoice current = choice;
        LimitChoice.Branch branch = current == null ? LimitChoice.UNLIMITED : current.of(request);
        RateLimiter limiter = branch.limiter();
        if (limiter == null && concurrency == null) {
            return PASSED;
        }
        String caller = caller(request, client);
        // Once: the attribute, the log and the draft's pk; cached per caller.
        String partition = PartitionKeys.of(caller);
        Checked checked = new Checked(request, limiter, caller, partition, branch);
        if (limiter == null) {
            return checked.leased(null);
        }
        return limiter.decideAsync(caller).thenCompose(checked::leased);
    }

    /** One request being checked: what its answer is made of, once the store has decided. */
    private final class Checked {
        private final RequestView request;
        private final RateLimiter limiter;
        private final String caller;
        private final String partition;
        private final LimitChoice.Branch branch;

        Checked(RequestView request, RateLimiter limiter, String caller, String partition, LimitChoice.Branch branch) {
            this.request = request;
            this.limiter = limiter;
            this.caller = caller;
            this.partition = partition;
            this.branch = branch;
        }

        /** After the rate limits decided ({@code null}: none), takes the lease if the route caps concurrency. */
        CompletionStage<HttpAnswer> leased(Decision decision) {
            if (decision != null && !decision.allowed()) {
                outcomes.note(request, decision, limiter, concurrency, caller, partition);
                return CompletableFuture.completedFuture(answers.refusal(request, decision, partition, branch));
            }
            if (concurrency == null) {
                return CompletableFuture.completedFuture(answer(decision, null));
            }
            return concurrency.acquireAsync(caller).thenApply(lease -> answer(decision, lease));
        }

        private HttpAnswer answer(Decision decision, Lease lease) {
            if (lease != null && !lease.decision().allowed()) {
                // All or nothing: a request refused its place is not charged by the rate limits either.
                if (decision != null && decision.outcome() == Decision.Outcome.ALLOWED) {
                    limiter.refund(caller);
                }
                Decision refused = lease.decision();
                outcomes.note(request, refused, null, concurrency, caller, partition);
                if (refused.outcome() == Decision.Outcome.FAILED_CLOSED) {
                    return answers.refusal(request, refused, partition, branch);
                }
                return answers.tooManyInFlight(request, refused);
            }
            outcomes.note(request, decision != null ? decision : lease.decision(), decision != null ? limiter : null,
                    concurrency, caller, partition);
            AfterResponse completion = completion(limiter, caller, decision, lease);
            if (decision == null || decision.outcome() == Decision.Outcome.FAILED_OPEN) {
                return completion == AfterResponse.NONE ? HttpAnswer.FAILED_OPEN
                        : new HttpAnswer(HttpAnswer.PROCEED, List.of(), null, completion);
            }
            return new HttpAnswer(HttpAnswer.PROCEED, answers.layerHeaders(request, decision, partition, branch), null,
                    completion);
        }
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
        return answers.headers(request);
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
        return outcomes.traffic();
    }

    /** The route, such as {@code filter 'search'}. */
    String where() {
        return where;
    }


    @Override
    public String toString() {
        return "Guard[" + (choice == null ? "" : choice + ", ") + (concurrency == null ? "" : concurrency + ", ")
                + (charging.after() ? charging + ", " : "") + "headers " + headers.configName() + "]";
    }
}
