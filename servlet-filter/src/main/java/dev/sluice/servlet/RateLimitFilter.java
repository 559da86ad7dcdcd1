package dev.sluice.servlet;

import dev.sluice.Decision;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.web.SluiceConfig;
import dev.sluice.web.SluiceConfig.ForwardedHeader;
import dev.sluice.web.SluiceConfig.HeaderStyle;
import dev.sluice.web.SluiceConfig.KeySource;
import dev.sluice.web.CallerResolver;
import dev.sluice.web.HttpAnswers;
import dev.sluice.internal.OptionalMetrics;
import dev.sluice.web.SharedStores;
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
 * <p>The init-params are Sluice's one configuration vocabulary, parsed by {@link SluiceConfig}:
 * {@code policy} (default: the filter name, with characters outside {@code A-Z a-z 0-9 . _ ~ -}
 * replaced by {@code -}), {@code algorithm}, {@code limit} (required), {@code burst}, {@code key},
 * {@code cost}, {@code store}, {@code failure-mode}, {@code timeout}, {@code headers},
 * {@code partition-key}, {@code trusted-proxies}, {@code forwarded-header} ({@code x-forwarded-for} or
 * {@code forwarded}: the one header read from trusted proxies), {@code ipv6-prefix} (32 to 128,
 * default 64: the network an IPv6 client is keyed by), {@code mode} and {@code metrics}. They are
 * parsed once, in {@link #init}. An unknown init-param or a bad
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
 *                 .withHeaders(SluiceConfig.HeaderStyle.BOTH))
 *         .addMappingForUrlPatterns(null, false, "/api/*");
 * }</pre>
 *
 * <p>A filter built around a {@link RateLimiter} takes no init-params, and never closes the
 * limiter's store: the application that built it owns it.
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
 *       {@code Retry-After} and a problem body.
 * </ul>
 *
 * <p>A request is charged once per filter, however many times it passes the filter (a filter
 * mapped for {@code REQUEST}, {@code FORWARD}, {@code INCLUDE}, {@code ERROR} and {@code ASYNC}
 * decides on the first dispatch that reaches it and lets the others through). When several
 * filters (or a filter and a rate-limited JAX-RS resource method) apply to one request, each
 * charges its own policy and adds its decision to a request attribute; each rewrites the
 * rate-limit headers from all of them, so the draft lists carry one member per policy of every
 * layer and the legacy headers describe the binding limit of all layers.
 *
 * <p>Instances are thread-safe. Their configuration is immutable: the {@code with*} methods
 * return copies.
 */
public final class RateLimitFilter implements Filter {

    private static final Logger LOG = LoggerFactory.getLogger(RateLimitFilter.class);
    private static final String CHARGED_PREFIX = RateLimitFilter.class.getName() + ".charged:";
    private static final int MAX_POLICY = 64;
    private static final byte[] UNAVAILABLE_BODY = HttpAnswers.serviceUnavailable().getBytes(StandardCharsets.UTF_8);
    private static final List<KeySource> IP = List.of(new KeySource(KeySource.Kind.IP, ""));

    /** The limiter given in Java, or {@code null} for a filter configured by init-params. */
    private final RateLimiter givenLimiter;
    private final List<KeySource> givenKey;
    private final HeaderStyle givenHeaders;
    private final List<String> givenTrustedProxies;
    private final ForwardedHeader givenForwardedHeader;
    private final int givenIpv6Prefix;
    private final boolean givenPartitionKey;

    /** Everything the request path needs, built by {@link #init}; {@code null} outside init..destroy. */
    private volatile Active active;

    /** What an initialised filter decides with; immutable. */
    private record Active(RateLimiter limiter, CallerResolver resolver, HeaderStyle headers, boolean partitionKey,
                          String chargedAttribute, SharedStores stores, String store) {
    }

    /**
     * A filter configured entirely by its init-params in {@link #init}; the constructor the
     * container calls for a {@code <filter-class>}.
     */
    public RateLimitFilter() {
        this(null, IP, HeaderStyle.LEGACY, List.of(), ForwardedHeader.X_FORWARDED_FOR, SluiceConfig.DEFAULT_IPV6_PREFIX,
                false);
    }

    /**
     * A filter deciding with a limiter built in Java, keyed by the client address ({@code ip}),
     * sending the {@code legacy} headers and trusting no proxy until told otherwise by the
     * {@code with*} methods. The filter never closes the limiter's store.
     *
     * @param limiter the limiter; its limits, store, failure mode and timeout apply
     */
    public RateLimitFilter(RateLimiter limiter) {
        this(Objects.requireNonNull(limiter, "limiter"), IP, HeaderStyle.LEGACY, List.of(),
                ForwardedHeader.X_FORWARDED_FOR, SluiceConfig.DEFAULT_IPV6_PREFIX, false);
    }

    private RateLimitFilter(RateLimiter limiter, List<KeySource> key, HeaderStyle headers, List<String> trustedProxies,
                            ForwardedHeader forwardedHeader, int ipv6Prefix, boolean partitionKey) {
        this.givenLimiter = limiter;
        this.givenKey = key;
        this.givenHeaders = headers;
        this.givenTrustedProxies = trustedProxies;
        this.givenForwardedHeader = forwardedHeader;
        this.givenIpv6Prefix = ipv6Prefix;
        this.givenPartitionKey = partitionKey;
    }

    /**
     * A copy of this filter taking the caller's identity from {@code sources}, in the syntax of
     * the {@code key} parameter: comma-separated {@code header:NAME}, {@code principal},
     * {@code param:NAME} or {@code ip}, the first present wins (e.g. {@code header:X-API-Key,ip}).
     *
     * @param sources the key sources, as in the {@code key} parameter
     * @return a new filter; this one is unchanged
     * @throws IllegalArgumentException naming the value if it is malformed
     * @throws IllegalStateException    if this filter is configured by init-params
     */
    public RateLimitFilter withKey(String sources) {
        requireGiven("withKey");
        return new RateLimitFilter(givenLimiter, SluiceConfig.parseKeySources(Objects.requireNonNull(sources, "sources")),
                givenHeaders, givenTrustedProxies, givenForwardedHeader, givenIpv6Prefix, givenPartitionKey);
    }

    /**
     * A copy of this filter sending the given rate-limit headers.
     *
     * @param headers which headers to send, as in the {@code headers} parameter
     * @return a new filter; this one is unchanged
     * @throws IllegalStateException if this filter is configured by init-params
     */
    public RateLimitFilter withHeaders(HeaderStyle headers) {
        requireGiven("withHeaders");
        return new RateLimitFilter(givenLimiter, givenKey, Objects.requireNonNull(headers, "headers"), givenTrustedProxies,
                givenForwardedHeader, givenIpv6Prefix, givenPartitionKey);
    }

    /**
     * A copy of this filter sending, with draft headers, the partition key {@code pk}: a keyed
     * hash of the caller (see the {@code partition-key} parameter).
     *
     * @param partitionKey whether to send {@code pk}
     * @return a new filter; this one is unchanged
     * @throws IllegalStateException if this filter is configured by init-params
     */
    public RateLimitFilter withPartitionKey(boolean partitionKey) {
        requireGiven("withPartitionKey");
        return new RateLimitFilter(givenLimiter, givenKey, givenHeaders, givenTrustedProxies, givenForwardedHeader,
                givenIpv6Prefix, partitionKey);
    }

    /**
     * A copy of this filter believing the forwarding header (see {@link #withForwardedHeader}) from
     * peers in {@code cidrs}, in the syntax of the {@code trusted-proxies} parameter (e.g.
     * {@code 10.0.0.0/8, ::1}); an empty string trusts no proxy.
     *
     * @param cidrs the trusted proxies, as in the {@code trusted-proxies} parameter
     * @return a new filter; this one is unchanged
     * @throws IllegalArgumentException naming the value if it is malformed
     * @throws IllegalStateException    if this filter is configured by init-params
     */
    public RateLimitFilter withTrustedProxies(String cidrs) {
        requireGiven("withTrustedProxies");
        return new RateLimitFilter(givenLimiter, givenKey, givenHeaders,
                SluiceConfig.parseTrustedProxies(Objects.requireNonNull(cidrs, "cidrs")), givenForwardedHeader,
                givenIpv6Prefix, givenPartitionKey);
    }

    /**
     * A copy of this filter reading the client address from {@code header} when the peer is a
     * trusted proxy, in the syntax of the {@code forwarded-header} parameter:
     * {@code x-forwarded-for} (the default) or {@code forwarded}. The other header is never read.
     *
     * @param header the header the trusted proxies write, as in the {@code forwarded-header} parameter
     * @return a new filter; this one is unchanged
     * @throws IllegalArgumentException naming the value if it is neither
     * @throws IllegalStateException    if this filter is configured by init-params
     */
    public RateLimitFilter withForwardedHeader(String header) {
        requireGiven("withForwardedHeader");
        return new RateLimitFilter(givenLimiter, givenKey, givenHeaders, givenTrustedProxies,
                SluiceConfig.parseForwardedHeader(Objects.requireNonNull(header, "header")), givenIpv6Prefix,
                givenPartitionKey);
    }

    /**
     * A copy of this filter keying IPv6 clients of {@code ip} by their network of {@code prefix}
     * bits, as the {@code ipv6-prefix} parameter does (default 64); IPv4 clients are keyed per
     * address.
     *
     * @param prefix the prefix length, 32 to 128
     * @return a new filter; this one is unchanged
     * @throws IllegalArgumentException naming the value if it is out of range
     * @throws IllegalStateException    if this filter is configured by init-params
     */
    public RateLimitFilter withIpv6Prefix(int prefix) {
        requireGiven("withIpv6Prefix");
        return new RateLimitFilter(givenLimiter, givenKey, givenHeaders, givenTrustedProxies, givenForwardedHeader,
                SluiceConfig.checkIpv6Prefix(prefix), givenPartitionKey);
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
        String charged = CHARGED_PREFIX + name;
        if (givenLimiter != null) {
            List<String> params = Collections.list(config.getInitParameterNames());
            if (!params.isEmpty()) {
                throw new ServletException(where(name) + "init-param '" + params.get(0) + "' cannot configure a filter "
                        + "built around a RateLimiter; configure that limiter in Java, got '"
                        + config.getInitParameter(params.get(0)) + "'");
            }
            active = new Active(givenLimiter, new CallerResolver(givenKey, givenTrustedProxies, givenForwardedHeader,
                    givenIpv6Prefix), givenHeaders, givenPartitionKey, charged, null, null);
            HttpAnswers.warnOfNonTokenPolicies(givenLimiter.limits(), givenHeaders, where(name).trim());
            LOG.info("Sluice filter '{}': {}, key {}", name, givenLimiter, givenKey);
            return;
        }
        SluiceConfig parsed;
        try {
            for (String param : Collections.list(config.getInitParameterNames())) {
                SluiceConfig.checkName(param);
            }
            parsed = SluiceConfig.parse(config::getInitParameter, defaultPolicy(name));
        } catch (IllegalArgumentException e) {
            // Core messages start with the quoted parameter name: "'limit' must look like ...".
            throw new ServletException(where(name) + "init-param " + e.getMessage(), e);
        }
        SharedStores stores = SharedStores.application();
        RateLimitStore store;
        try {
            store = stores.acquire(parsed.store());
        } catch (IllegalArgumentException e) {
            throw new ServletException(where(name) + "init-param " + e.getMessage(), e);
        } catch (RuntimeException e) {
            throw new ServletException(where(name) + "init-param 'store' cannot be used (" + e + "), got '"
                    + parsed.store() + "'", e);
        }
        RateLimiter limiter = RateLimiter.builder().limit(parsed.limit()).store(store).failureMode(parsed.failureMode())
                .timeout(parsed.timeout()).shadowMode(parsed.shadow())
                .listener(OptionalMetrics.listener(parsed.metrics(), parsed.limit().policy())).build();
        active = new Active(limiter, new CallerResolver(parsed), parsed.headers(), parsed.partitionKey(), charged, stores,
                parsed.store());
        HttpAnswers.warnOfNonTokenPolicies(limiter.limits(), parsed.headers(), where(name).trim());
        LOG.info("Sluice filter '{}': {}, key {}, store {}, headers {}, trusted proxies {} ({}), ipv6 prefix /{}", name,
                limiter, parsed.key(), parsed.store(), parsed.headers().configName(),
                parsed.trustedProxies(), parsed.forwardedHeader().configName(), parsed.ipv6Prefix());
    }

    private static String where(String filterName) {
        return "filter '" + filterName + "': ";
    }

    /** The filter name made into a valid policy name: other characters become {@code -}. */
    static String defaultPolicy(String filterName) {
        if (filterName == null || filterName.isEmpty()) {
            return "sluice";
        }
        StringBuilder policy = new StringBuilder(Math.min(filterName.length(), MAX_POLICY));
        for (int i = 0; i < filterName.length() && policy.length() < MAX_POLICY; i++) {
            char c = filterName.charAt(i);
            boolean allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '~' || c == '-';
            policy.append(allowed ? c : '-');
        }
        return policy.toString();
    }

    /**
     * Decides the request once and lets it proceed, or answers 429 or 503 itself; see the class
     * description.
     */
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
        String caller = a.resolver.resolve(new ServletRequestView(request));
        Decision decision = a.limiter.decide(caller);
        switch (decision.outcome()) {
            case ALLOWED, SHADOW_REJECTED -> {
                // Before the chain: once the application writes, the response may be committed.
                HttpAnswers.writeHeaders(layers(request, decision, caller, a), a.headers, response::setHeader);
                chain.doFilter(request, response);
            }
            case FAILED_OPEN -> chain.doFilter(request, response);
            case REJECTED, UNSATISFIABLE -> {
                response.setStatus(429);
                response.setHeader("Retry-After", Long.toString(HttpAnswers.retryAfterSeconds(decision)));
                HttpAnswers.writeHeaders(layers(request, decision, caller, a), a.headers, response::setHeader);
                writeProblem(response, HttpAnswers.tooManyRequests(decision, a.headers).getBytes(StandardCharsets.UTF_8));
            }
            case FAILED_CLOSED -> {
                response.setStatus(HttpServletResponse.SC_SERVICE_UNAVAILABLE);
                response.setHeader("Retry-After", Long.toString(HttpAnswers.retryAfterSeconds(decision)));
                writeProblem(response, UNAVAILABLE_BODY);
            }
        }
    }

    /** Adds this filter's decision to the request's layers and returns them all. */
    private static List<HttpAnswers.Layer> layers(HttpServletRequest request, Decision decision, String caller, Active a) {
        String pk = a.partitionKey && a.headers.draft() ? HttpAnswers.PartitionKeys.of(caller) : null;
        return HttpAnswers.Layers.of(request::getAttribute, request::setAttribute).add(decision, pk, a.headers);
    }

    private static void writeProblem(HttpServletResponse response, byte[] body) throws IOException {
        response.setContentType(HttpAnswers.PROBLEM_JSON);
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
        if (a != null && a.stores != null) {
            a.stores.release(a.store);
        }
    }

    @Override
    public String toString() {
        Active a = active;
        return "RateLimitFilter[" + (a != null ? a.limiter : givenLimiter != null ? givenLimiter : "not initialised") + "]";
    }
}
