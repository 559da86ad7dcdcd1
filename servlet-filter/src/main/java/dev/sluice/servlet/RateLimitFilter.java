package dev.sluice.servlet;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.web.internal.AfterResponse;
import dev.sluice.web.internal.Guard;
import dev.sluice.servlet.internal.ServletRequestView;
import dev.sluice.web.HeaderStyle;
import dev.sluice.web.internal.HttpAnswer;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.internal.KeySource;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.internal.Parameter;
import dev.sluice.web.internal.PolicyNames;
import dev.sluice.web.internal.Rejection;
import dev.sluice.web.internal.RouteSpec;
import dev.sluice.web.internal.StoreRegistry;
import dev.sluice.web.internal.WebSettings;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A Servlet filter that rate-limits the requests it is mapped to: one {@code <filter>} per
 * policy, applied by {@code <filter-mapping>}.
 *
 * <h2>In {@code web.xml}</h2>
 *
 * <pre>{@code
 * <filter>
 *   <filter-name>search</filter-name>
 *   <filter-class>dev.sluice.servlet.RateLimitFilter</filter-class>
 *   <async-supported>true</async-supported>
 *   <init-param><param-name>limit</param-name><param-value>100/1m</param-value></init-param>
 *   <init-param><param-name>key</param-name><param-value>header:X-API-Key,ip</param-value></init-param>
 *   <init-param><param-name>store</param-name><param-value>redis://redis:6379</param-value></init-param>
 * </filter>
 * <!-- header:X-API-Key is what the client sends: every invented key is a fresh budget. Validate
 *      keys in a filter mapped before this one, or add a second filter keyed by ip alone. -->
 * <filter-mapping>
 *   <filter-name>search</filter-name>
 *   <url-pattern>/search/*</url-pattern>
 * </filter-mapping>
 * }</pre>
 *
 * <p>The init-params are Sluice's one configuration vocabulary ({@link Parameter}), parsed by
 * {@link RouteSpec} and {@link WebSettings}:
 * {@code policy} (default: the filter name, with characters outside {@code A-Z a-z 0-9 . _ ~ -}
 * replaced by {@code -}), {@code algorithm}, {@code limit} (required), {@code burst}, {@code key},
 * {@code cost}, {@code charge} ({@code before}, the default, or {@code after}: charge once the
 * response status is known), {@code charge-when} (with {@code charge=after}, the statuses charged:
 * codes and classes such as {@code 401,403} or {@code 4xx}; default {@code 4xx,5xx}), {@code lease}
 * (with {@code algorithm=concurrency} and a plain {@code limit} such as {@code 10}: the longest a
 * request holds its place, default {@code 30s}), {@code store}, {@code failure-mode}, {@code timeout}, {@code headers},
 * {@code partition-key}, {@code trusted-proxies}, {@code forwarded-header} ({@code x-forwarded-for} or
 * {@code forwarded}: the one header read from trusted proxies), {@code ipv6-prefix} (32 to 128,
 * default 64: the network an IPv6 client is keyed by), {@code mode}, {@code metrics},
 * {@code local-share} (with {@code failure-mode=local}: the share of each limit this JVM grants
 * alone while the store fails, greater than 0 and at most 1, default 1),
 * {@code tier} ({@code role}, {@code attribute:NAME} or {@code header:NAME}: where a request's tier
 * comes from), {@code tier-limits} (such as {@code premium:1000/1h,internal:unlimited}: each tier's
 * limit under the policy {@code <policy>/<tier>}; a request of no named tier gets {@code limit}),
 * {@code exempt} (client networks never limited, never counted, sent no rate-limit headers) and
 * {@code methods} (such as {@code POST,PUT}: the methods limited, any method tokens; the others
 * pass untouched; naming {@code GET} limits {@code HEAD} too, since {@code doHead} runs
 * {@code doGet}; default all), and {@code reject} ({@code problem}, the default: Sluice writes the
 * problem body; {@code send-error}: Sluice sets the headers, then calls {@code sendError(status)}
 * so that the application's {@code <error-page>} writes the body). {@code key} also takes parts
 * joined by {@code +}, all required ({@code ip+param:username}), {@code attribute:NAME} (a request
 * attribute the application's authentication set) and {@code global} (one budget for every
 * caller). A context-param {@code sluice.<name>} (any but {@code policy}) is the default of every
 * filter of the application, which an init-param overrides. They are
 * parsed once, in {@link #init}. An unknown init-param (or {@code sluice.*} context-param) or a bad
 * value makes {@code init} throw a {@link ServletException} naming the filter, the init-param
 * and the value, such as
 * {@code filter 'search': init-param 'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'},
 * so that the application fails to deploy rather than run half-limited. Filters of one web
 * application that name the same {@code store} share one store (one Redis client), which the
 * last of them closes in {@link #destroy}.
 *
 * <h2>In Java</h2>
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder().limit(Limit.of("api", "10/s").withBurst(20)).build();
 * servletContext.addFilter("api", new RateLimitFilter(limiter)
 *                 .withKey("header:X-API-Key,ip")   // unvalidated keys: see the web.xml example
 *                 .withHeaders(HeaderStyle.BOTH))
 *         .addMappingForUrlPatterns(null, false, "/api/*");
 * }</pre>
 *
 * <p>A filter built around a {@link RateLimiter} takes no init-params, and never closes the
 * limiter's store: the application that built it owns it. Its {@code with*} methods return
 * copies, in the syntax of the init-param of the same name; on a filter configured by
 * init-params they throw {@link IllegalStateException}.
 *
 * <h2>Per request</h2>
 *
 * <p>The caller is resolved from the key sources (first present wins; the client address is
 * believed from the {@code forwarded-header} only when the socket peer is a trusted proxy, the
 * other forwarding header is never read, and an IPv6 client is keyed by its {@code ipv6-prefix}
 * network), and one decision is made, waiting on the store at most the configured timeout. Then:
 *
 * <ul>
 *   <li>allowed: the rate-limit headers are set and the request proceeds;
 *   <li>rejected: {@code 429 Too Many Requests} with {@code Retry-After} (whole seconds, rounded
 *       up, at least 1), the rate-limit headers (remaining 0) and an RFC 9457
 *       {@code application/problem+json} body; the application is not called;
 *   <li>store failed, {@code failure-mode=open}: the request proceeds without rate-limit headers
 *       (the limiter logs and counts the failure);
 *   <li>store failed, {@code failure-mode=closed}: {@code 503 Service Unavailable} with
 *       {@code Retry-After} and a problem body;
 *   <li>store failed, {@code failure-mode=local}: decided by a limiter in this JVM with the same
 *       limits scaled by {@code local-share}, answered as allowed or rejected above, with the
 *       headers of the local decision, until the store answers again.
 * </ul>
 *
 * <p>With {@code charge=after} the request is decided (and refused only when the budget is spent)
 * as it arrives, and refunded once its response status is known unless that status is in
 * {@code charge-when}: a login filter with {@code charge-when=401,403} counts failed attempts only.
 * With {@code algorithm=concurrency} the request holds a lease until its response is complete;
 * over the limit it is answered {@code 429} with {@code Retry-After} (and no rate-limit headers of
 * its own). The end of the response is when the chain returns, or, if the application started
 * async mode, its {@code complete()} or the {@code onComplete}, {@code onError} or
 * {@code onTimeout} of its {@code AsyncContext}, through every async cycle of the request, so map
 * such filters with {@code <async-supported>true}. The status the client received decides: once
 * the response is committed, its status, whatever fails afterwards (a client that read the status
 * line of a 401 and reset the connection is charged); a failure before that counts as 500.
 *
 * <p>A request is charged once per filter, however many times it passes the filter (a filter
 * mapped for {@code REQUEST}, {@code FORWARD}, {@code INCLUDE}, {@code ERROR} and {@code ASYNC}
 * decides on the first dispatch that reaches it and lets the others through). When several
 * filters (or a filter and a rate-limited JAX-RS resource method) apply to one request, each
 * charges its own policy and adds its decision to a request attribute; each rewrites the
 * rate-limit headers from all of them, so the draft lists carry one member per policy of every
 * layer and the legacy headers describe the binding limit of all layers.
 *
 * <p>Every request it decides carries the request attributes of
 * {@link dev.sluice.web.RequestAttributes} ({@code dev.sluice.outcome}, {@code dev.sluice.policy},
 * {@code dev.sluice.remaining}, {@code dev.sluice.partition}), for an access log, an error page or
 * the application.
 *
 * <p>Instances are thread-safe and their configuration immutable.
 */
public final class RateLimitFilter implements Filter {

    /**
     * The {@code ServletContext} attribute where the application gives its Micrometer
     * {@code MeterRegistry} for {@code metrics=true}, {@value}; absent: Micrometer's global registry.
     */
    public static final String METER_REGISTRY = dev.sluice.metrics.OptionalMetrics.REGISTRY;

    private static final Logger LOG = LoggerFactory.getLogger(RateLimitFilter.class);
    private static final String CHARGED_PREFIX = RateLimitFilter.class.getName() + ".charged:";

    /** The limiter given in Java, or {@code null} for a filter configured by init-params. */
    private final RateLimiter givenLimiter;
    private final List<KeySource> givenKey;
    /** The resolver given in Java, or {@code null}. */
    private final LimitResolver givenResolver;
    /** The caller resolver given in Java, or {@code null}. */
    private final KeyResolver givenKeyResolver;
    /** The HTTP settings given in Java; of them, only headers, partition key and client address apply. */
    private final WebSettings givenWeb;

    /** Everything the request path needs, built by {@link #init}; {@code null} outside init..destroy. */
    private volatile Active active;

    /** What an initialised filter decides with; immutable. {@code store} is {@code null} for a given limiter. */
    private record Active(Guard guard, String chargedAttribute, String store, Rejection reject,
                          ApplicationPolicies policies) {
        @Override
        public String toString() {
            return "Active[" + guard + ", store " + WebSettings.shown(store) + ", reject " + reject + "]";
        }
    }

    /**
     * A filter configured entirely by its init-params in {@link #init}; the constructor the
     * container calls for a {@code <filter-class>}.
     */
    public RateLimitFilter() {
        this(null, KeySource.IP, WebSettings.DEFAULTS, null, null);
    }

    /**
     * A filter deciding with a limiter built in Java, keyed by the client address ({@code ip}),
     * sending the {@code legacy} headers and trusting no proxy until told otherwise by the
     * {@code with*} methods. The filter never closes the limiter's store.
     *
     * @param limiter the limiter; its limits, store, failure mode and timeout apply
     */
    public RateLimitFilter(RateLimiter limiter) {
        this(Objects.requireNonNull(limiter, "limiter"), KeySource.IP, WebSettings.DEFAULTS, null, null);
    }

    private RateLimitFilter(RateLimiter limiter, List<KeySource> key, WebSettings web, LimitResolver resolver,
                            KeyResolver keyResolver) {
        this.givenLimiter = limiter;
        this.givenKey = key;
        this.givenWeb = web;
        this.givenResolver = resolver;
        this.givenKeyResolver = keyResolver;
    }

    /**
     * A copy choosing each request's limits with {@code resolver} (for plans that {@code tier}
     * and {@code tier-limits} cannot express); the limiter's own limits apply when it returns
     * {@code null}, and the limiters built for its lists share the limiter's store, failure mode,
     * timeout and shadow mode.
     */
    public RateLimitFilter withLimitResolver(LimitResolver resolver) {
        requireGiven("withLimitResolver");
        return new RateLimitFilter(givenLimiter, givenKey, givenWeb, Objects.requireNonNull(resolver, "resolver"),
                givenKeyResolver);
    }

    /**
     * A copy asking {@code resolver} for each request's caller first (an identity the application
     * derives itself); where it names none, the key sources of {@link #withKey} decide. For a
     * request attribute holding the identity as it is, {@code withKey("attribute:NAME")} needs no code.
     */
    public RateLimitFilter withKeyResolver(KeyResolver resolver) {
        requireGiven("withKeyResolver");
        return new RateLimitFilter(givenLimiter, givenKey, givenWeb, givenResolver,
                Objects.requireNonNull(resolver, "resolver"));
    }

    /**
     * A copy taking the caller's identity from {@code sources}, as the {@code key} init-param:
     * comma-separated {@code header:NAME}, {@code principal}, {@code param:NAME} or {@code ip}, the
     * first present wins (e.g. {@code header:X-API-Key,ip}).
     *
     * @throws IllegalArgumentException naming the value if it is malformed
     */
    public RateLimitFilter withKey(String sources) {
        requireGiven("withKey");
        return new RateLimitFilter(givenLimiter, KeySource.parseList(Objects.requireNonNull(sources, "sources")), givenWeb,
                givenResolver, givenKeyResolver);
    }

    /** A copy sending the given rate-limit headers, as the {@code headers} init-param. */
    public RateLimitFilter withHeaders(HeaderStyle headers) {
        requireGiven("withHeaders");
        return new RateLimitFilter(givenLimiter, givenKey, givenWeb.withHeaders(Objects.requireNonNull(headers, "headers")),
                givenResolver, givenKeyResolver);
    }

    /** A copy sending, with draft headers, the keyed hash {@code pk} of the caller, as {@code partition-key}. */
    public RateLimitFilter withPartitionKey(boolean partitionKey) {
        requireGiven("withPartitionKey");
        return new RateLimitFilter(givenLimiter, givenKey, givenWeb.withPartitionKey(partitionKey), givenResolver,
                givenKeyResolver);
    }

    /**
     * A copy believing the forwarding header (see {@link #withForwardedHeader}) from peers in
     * {@code cidrs}, as {@code trusted-proxies} (e.g. {@code 10.0.0.0/8, ::1}); empty trusts none.
     *
     * @throws IllegalArgumentException naming the value if it is malformed
     */
    public RateLimitFilter withTrustedProxies(String cidrs) {
        requireGiven("withTrustedProxies");
        return new RateLimitFilter(givenLimiter, givenKey, givenWeb.withTrustedProxies(cidrs), givenResolver,
                givenKeyResolver);
    }

    /**
     * A copy reading the client address from {@code header} when the peer is a trusted proxy, as
     * {@code forwarded-header}: {@code x-forwarded-for} (the default) or {@code forwarded}. The
     * other header is never read.
     *
     * @throws IllegalArgumentException naming the value if it is neither
     */
    public RateLimitFilter withForwardedHeader(String header) {
        requireGiven("withForwardedHeader");
        return new RateLimitFilter(givenLimiter, givenKey, givenWeb.withForwardedHeader(header), givenResolver,
                givenKeyResolver);
    }

    /**
     * A copy keying IPv6 clients of {@code ip} by their network of {@code prefix} bits, 32 to 128,
     * as {@code ipv6-prefix} (default 64); IPv4 clients are keyed per address.
     *
     * @throws IllegalArgumentException naming the value if it is out of range
     */
    public RateLimitFilter withIpv6Prefix(int prefix) {
        requireGiven("withIpv6Prefix");
        return new RateLimitFilter(givenLimiter, givenKey, givenWeb.withIpv6Prefix(prefix), givenResolver,
                givenKeyResolver);
    }

    private void requireGiven(String method) {
        if (givenLimiter == null) {
            throw new IllegalStateException(method + " applies to a filter built around a RateLimiter; "
                    + "a filter configured by init-params takes the matching init-param");
        }
    }

    /**
     * Parses the init-params (or adopts the limiter given in Java) and, for a configured
     * {@code store}, acquires the application's shared store.
     *
     * @throws ServletException naming the filter, the init-param and its value when the
     *                          configuration is invalid, so that the application does not start
     */
    @Override
    public void init(FilterConfig config) throws ServletException {
        String name = config.getFilterName();
        String where = "filter '" + name + "'";
        String charged = CHARGED_PREFIX + name;
        List<String> params = Collections.list(config.getInitParameterNames());
        if (givenLimiter != null) {
            if (!params.isEmpty()) {
                throw new ServletException(where + ": init-param '" + params.get(0) + "' cannot configure a filter "
                        + "built around a RateLimiter; configure that limiter in Java, got '"
                        + config.getInitParameter(params.get(0)) + "'");
            }
            Guard guard = new Guard(givenLimiter, givenKey, givenWeb, where);
            guard = givenResolver == null ? guard : guard.withLimitResolver(givenResolver);
            guard = givenKeyResolver == null ? guard : guard.withKeyResolver(givenKeyResolver);
            active = new Active(guard, charged, null, Rejection.PROBLEM, register(config, guard, givenLimiter.store(), null));
            LOG.info("Sluice filter '{}': {}, key {}", name, givenLimiter, givenKey);
            return;
        }
        RouteSpec route;
        WebSettings web;
        Rejection reject;
        FilterParameters lookup;
        try {
            lookup = new FilterParameters(config);
        } catch (IllegalArgumentException e) {
            throw new ServletException(where + ": " + e.getMessage(), e);
        }
        try {
            params.forEach(Parameter::named);
            route = RouteSpec.parse(lookup, PolicyNames.forFilter(name));
            web = WebSettings.parse(lookup);
            reject = Rejection.parse(lookup, "a servlet filter", Rejection.PROBLEM, Rejection.SEND_ERROR);
        } catch (IllegalArgumentException e) {
            // Messages start with the quoted parameter name: "'limit' must look like ...".
            throw new ServletException(where + ": " + lookup.describe(e), e);
        }
        RateLimitStore store;
        try {
            store = StoreRegistry.application().acquire(web.store());
        } catch (IllegalArgumentException e) {
            throw new ServletException(where + ": " + lookup.describe(e), e);
        } catch (RuntimeException e) {
            throw new ServletException(where + ": " + lookup.describe(new IllegalArgumentException("'store' cannot be used ("
                    + e + "), got '" + WebSettings.shown(web.store()) + "'")), e);
        }
        Guard guard;
        try {
            // The application's own Micrometer registry, when it gives one; else the global one.
            guard = Guard.of(List.of(route), web, store, where,
                    config.getServletContext() == null ? null : config.getServletContext().getAttribute(METER_REGISTRY));
        } catch (IllegalArgumentException e) {
            StoreRegistry.application().release(web.store());
            throw new ServletException(where + ": " + lookup.describe(e), e);
        }
        active = new Active(guard, charged, web.store(), reject, register(config, guard, store, web.store()));
        LOG.info("Sluice filter '{}': {}, key {}, store {}, headers {}, trusted proxies {} ({}), ipv6 prefix /{}", name,
                guard, route.key(), WebSettings.shown(web.store()), web.headers().configName(),
                web.callers().trustedProxies(), web.callers().forwardedHeader().configName(), web.callers().ipv6Prefix());
    }

    /**
     * Decides the request once and lets it proceed, or answers 429 or 503 itself; see the class
     * description.
     */
    /** Lists the route in the application's {@link dev.sluice.web.PolicyRegistry}, for the console. */
    private static ApplicationPolicies register(FilterConfig config, Guard guard, RateLimitStore store, String storeValue) {
        if (config.getServletContext() == null) {
            return null;
        }
        ApplicationPolicies policies = Registries.of(config.getServletContext());
        policies.register(guard, store, storeValue);
        return policies;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        Active a = active;
        if (a == null) {
            throw new ServletException("RateLimitFilter used before init() or after destroy()");
        }
        if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)
                || req.getAttribute(a.chargedAttribute) != null) {
            chain.doFilter(req, res);
            return;
        }
        // Marked before deciding: a forward, include, error or async dispatch of this request
        // passes through without being charged again.
        request.setAttribute(a.chargedAttribute, Boolean.TRUE);
        HttpAnswer answer = a.guard.check(new ServletRequestView(request));
        // Before the chain: once the application writes, the response may be committed.
        for (HttpAnswer.Header header : answer.headers()) {
            response.setHeader(header.name(), header.value());
        }
        if (answer.proceeds()) {
            if (answer.afterResponse() == AfterResponse.NONE) {
                chain.doFilter(request, response);
            } else {
                ResponseEnd.proceed(request, response, chain, answer.afterResponse());
            }
            return;
        }
        if (a.reject == Rejection.SEND_ERROR) {
            // The headers are set: the application's error page writes the body.
            response.sendError(answer.status());
            return;
        }
        byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
        response.setStatus(answer.status());
        response.setContentType(HttpAnswer.PROBLEM_JSON);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
    }

    /**
     * Releases this filter's use of the application's shared store, closing it if no other
     * filter uses it. A limiter given in Java is left alone.
     */
    @Override
    public void destroy() {
        Active a = active;
        active = null;
        if (a != null && a.policies != null) {
            a.policies.unregister(a.guard);
        }
        if (a != null && a.store != null) {
            StoreRegistry.application().release(a.store);
        }
    }

    /**
     * Whether this filter's limiter has stopped waiting on its store after repeated failures (its
     * circuit breaker is open, {@link RateLimiter#storeCircuitOpen()}), for health checks;
     * {@code false} outside init..destroy and for a filter with only a concurrency limit.
     */
    public boolean storeCircuitOpen() {
        Active a = active;
        return a != null && a.guard.limiter() != null && a.guard.limiter().storeCircuitOpen();
    }

    @Override
    public String toString() {
        Active a = active;
        return "RateLimitFilter[" + (a != null ? a.guard : givenLimiter != null ? givenLimiter
                : "not initialised") + "]";
    }
}
