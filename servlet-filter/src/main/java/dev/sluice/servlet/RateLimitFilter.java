package dev.sluice.servlet;

import dev.sluice.RateLimiter;
import dev.sluice.servlet.internal.ServletRequestView;
import dev.sluice.web.Answer;
import dev.sluice.web.HeaderStyle;
import dev.sluice.web.HttpLimiter;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.Verdict;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionException;

/**
 * A Servlet filter that rate-limits the requests it is mapped to: one {@code <filter>} per
 * policy, applied by {@code <filter-mapping>}.
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
 * <p>The init-params are Sluice's one configuration vocabulary, each with its values and default
 * in the <a href="https://github.com/sluice-dev/sluice/blob/main/docs/configuration.md">configuration
 * reference</a> ({@code docs/configuration.md}): {@code policy} (default: the filter name),
 * {@code algorithm}, {@code limit}, {@code burst}, {@code key}, {@code cost}, {@code charge},
 * {@code charge-when}, {@code lease}, {@code store}, {@code failure-mode}, {@code timeout},
 * {@code headers}, {@code partition-key}, {@code trusted-proxies}, {@code forwarded-header},
 * {@code ipv6-prefix}, {@code mode}, {@code metrics}, {@code local-share}, {@code tier},
 * {@code tier-limits}, {@code exempt}, {@code methods} and {@code reject} ({@code problem} or
 * {@code send-error}: the application's {@code <error-page>} writes the body). A context-param
 * {@code sluice.<name>} (any but {@code policy}) is the default of every filter of the application.
 * They are parsed once, in {@link #init}; an unknown name or a bad value makes it throw a
 * {@link ServletException} naming the filter, the init-param and the value, so that the
 * application fails to deploy rather than run half-limited. Filters naming the same {@code store}
 * share one store, which the last of them closes in {@link #destroy}.
 *
 * <p>In Java, a filter built around a {@link RateLimiter} takes no init-params and never closes
 * the limiter's store; its {@code with*} methods return copies, in the syntax of the init-param of
 * the same name (on a filter configured by init-params they throw {@link IllegalStateException},
 * except {@link #withKeyResolver} and {@link #withLimitResolver}, which give code to either kind):
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder().limit(Limit.of("api", "10/s").withBurst(20)).build();
 * servletContext.addFilter("api", new RateLimitFilter(limiter)
 *                 .withKey("header:X-API-Key,ip")   // unvalidated keys: see the web.xml example
 *                 .withHeaders(HeaderStyle.BOTH))
 *         .addMappingForUrlPatterns(null, false, "/api/*");
 * }</pre>
 *
 * <p>Per request, the filter asks its {@link HttpLimiter} and waits for the verdict (at most the
 * {@code timeout}), then lets the request through with the rate-limit headers, or answers
 * {@code 429} or {@code 503} itself (see the reference's "HTTP behaviour"). A request is charged
 * once per filter however many dispatches pass it. With {@code charge=after} or
 * {@code algorithm=concurrency} the end of the response is when the chain returns or, if the
 * application started async mode, when its {@code AsyncContext} completes, errs or times out, so
 * map such filters with {@code <async-supported>true}. Every decided request carries the
 * attributes of {@link dev.sluice.web.RequestAttributes}.
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
    /** The settings given in Java, as parameters: key, headers, partition key, client address. */
    private final Map<String, String> given;
    private final LimitResolver givenResolver;
    private final KeyResolver givenKeyResolver;

    /** What the request path needs, built by {@link #init}; {@code null} outside init..destroy. */
    private volatile Active active;

    private record Active(HttpLimiter limiter, String chargedAttribute) {
    }

    /** A filter configured entirely by its init-params in {@link #init}, as the container builds it. */
    public RateLimitFilter() {
        this(null, Map.of(), null, null);
    }

    /**
     * A filter deciding with a limiter built in Java, keyed by the client address ({@code ip}),
     * sending the {@code legacy} headers and trusting no proxy until told otherwise by the
     * {@code with*} methods. The filter never closes the limiter's store.
     *
     * @param limiter the limiter; its limits, store, failure mode and timeout apply
     */
    public RateLimitFilter(RateLimiter limiter) {
        this(Objects.requireNonNull(limiter, "limiter"), Map.of(), null, null);
    }

    private RateLimitFilter(RateLimiter limiter, Map<String, String> given, LimitResolver resolver,
                            KeyResolver keyResolver) {
        this.givenLimiter = limiter;
        this.given = Map.copyOf(given);
        this.givenResolver = resolver;
        this.givenKeyResolver = keyResolver;
        if (limiter != null) {
            given(null).build(); // a bad value fails in the with* method that gave it
        }
    }

    /**
     * A copy choosing each request's limits with {@code resolver}; the filter's own limits (its
     * limiter's, or its init-params') apply when it returns null. Unlike the other {@code with*}
     * methods it applies to a filter configured by init-params too: code has no init-param.
     */
    public RateLimitFilter withLimitResolver(LimitResolver resolver) {
        return new RateLimitFilter(givenLimiter, given, Objects.requireNonNull(resolver, "resolver"), givenKeyResolver);
    }

    /**
     * A copy asking {@code resolver} for each request's caller first; where it names none, {@code key}
     * decides. Applies to a filter configured by init-params too, as {@link #withLimitResolver}.
     */
    public RateLimitFilter withKeyResolver(KeyResolver resolver) {
        return new RateLimitFilter(givenLimiter, given, givenResolver, Objects.requireNonNull(resolver, "resolver"));
    }

    /** A copy taking the caller's identity from {@code sources}, as {@code key} (e.g. {@code header:X-API-Key,ip}). */
    public RateLimitFilter withKey(String sources) {
        return with("withKey", "key", Objects.requireNonNull(sources, "sources"));
    }

    /** A copy sending the given rate-limit headers, as the {@code headers} init-param. */
    public RateLimitFilter withHeaders(HeaderStyle headers) {
        return with("withHeaders", "headers", Objects.requireNonNull(headers, "headers").configName());
    }

    /** A copy sending, with draft headers, the keyed hash {@code pk} of the caller, as {@code partition-key}. */
    public RateLimitFilter withPartitionKey(boolean partitionKey) {
        return with("withPartitionKey", "partition-key", Boolean.toString(partitionKey));
    }

    /** A copy believing the forwarding header from peers in {@code cidrs}, as {@code trusted-proxies}. */
    public RateLimitFilter withTrustedProxies(String cidrs) {
        return with("withTrustedProxies", "trusted-proxies", cidrs);
    }

    /** A copy reading the client address from {@code header} of trusted proxies, as {@code forwarded-header}. */
    public RateLimitFilter withForwardedHeader(String header) {
        return with("withForwardedHeader", "forwarded-header", header);
    }

    /** A copy keying IPv6 clients of {@code ip} by their network of {@code prefix} bits, as {@code ipv6-prefix}. */
    public RateLimitFilter withIpv6Prefix(int prefix) {
        return with("withIpv6Prefix", "ipv6-prefix", Integer.toString(prefix));
    }

    private RateLimitFilter with(String method, String parameter, String value) {
        requireGiven(method);
        Map<String, String> copy = new HashMap<>(given);
        copy.put(parameter, value);
        return new RateLimitFilter(givenLimiter, copy, givenResolver, givenKeyResolver);
    }

    private void requireGiven(String method) {
        if (givenLimiter == null) {
            throw new IllegalStateException(method + " applies to a filter built around a RateLimiter; "
                    + "a filter configured by init-params takes the matching init-param");
        }
    }

    private HttpLimiter.Builder given(String where) {
        HttpLimiter.Builder builder = HttpLimiter.builder(where == null ? "a filter" : where).limiter(givenLimiter)
                .parameters(given::get);
        builder = givenResolver == null ? builder : builder.limitResolver(givenResolver);
        return givenKeyResolver == null ? builder : builder.keyResolver(givenKeyResolver);
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
        List<String> params = Collections.list(config.getInitParameterNames());
        HttpLimiter.Builder builder;
        FilterParameters lookup = null;
        try {
            if (givenLimiter != null) {
                if (!params.isEmpty()) {
                    throw new ServletException(where + ": init-param '" + params.get(0) + "' cannot configure a filter "
                            + "built around a RateLimiter; configure that limiter in Java, got '"
                            + config.getInitParameter(params.get(0)) + "'");
                }
                builder = given(where);
            } else {
                lookup = new FilterParameters(config);
                params.forEach(HttpLimiter::requireParameter);
                // The application's own Micrometer registry, when it gives one; else the global one.
                builder = HttpLimiter.builder(where).name(name).parameters(lookup)
                        .rejections("a servlet filter", "send-error").meterRegistry(config.getServletContext() == null
                                ? null : config.getServletContext().getAttribute(METER_REGISTRY));
                if (givenResolver != null) {
                    builder.limitResolver(givenResolver);
                }
                if (givenKeyResolver != null) {
                    builder.keyResolver(givenKeyResolver);
                }
            }
            if (config.getServletContext() != null) {
                builder.registry(Registries.of(config.getServletContext()));
            }
            active = new Active(builder.build(), CHARGED_PREFIX + name);
        } catch (IllegalArgumentException e) {
            // Messages start with the quoted parameter name: "'limit' must look like ...".
            throw new ServletException(where + ": " + (lookup == null ? e.getMessage() : lookup.describe(e)), e);
        }
        LOG.info("Sluice filter '{}': {}", name, active.limiter());
    }

    /** Decides the request once and lets it proceed, or answers 429 or 503 itself. */
    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
            throws IOException, ServletException {
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
        Verdict verdict = await(a.limiter, new ServletRequestView(request));
        Answer answer = verdict.answer();
        // Before the chain: once the application writes, the response may be committed.
        for (Answer.Header header : answer.headers()) {
            response.setHeader(header.name(), header.value());
        }
        if (verdict.proceeds()) {
            if (verdict.awaitsEnd()) {
                ResponseEnd.proceed(request, response, chain, verdict);
            } else {
                chain.doFilter(request, response);
            }
        } else if (a.limiter.reject().equals("send-error")) {
            response.sendError(answer.status()); // the headers are set: the application's error page writes the body
        } else {
            byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
            response.setStatus(answer.status());
            response.setContentType(answer.contentType());
            response.setContentLength(body.length);
            response.getOutputStream().write(body);
        }
    }

    /** The verdict, waited for here: the servlet API's thread waits, never the seam. */
    static Verdict await(HttpLimiter limiter, ServletRequestView view) {
        try {
            return limiter.check(view).toCompletableFuture().join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure : e;
        }
    }

    /** Releases this filter's use of the shared store, closing it if no other filter uses it. */
    @Override
    public void destroy() {
        Active a = active;
        active = null;
        if (a != null) {
            a.limiter.close();
        }
    }

    /**
     * Whether this filter's limiter has stopped waiting on its store after repeated failures, for
     * health checks; {@code false} outside init..destroy and for a filter with only a concurrency limit.
     */
    public boolean storeCircuitOpen() {
        Active a = active;
        return a != null && a.limiter.storeCircuitOpen();
    }

    @Override
    public String toString() {
        Active a = active;
        return "RateLimitFilter[" + (a != null ? a.limiter : givenLimiter != null ? givenLimiter
                : "not initialised") + "]";
    }
}
