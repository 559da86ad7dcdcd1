package dev.sluice.jaxrs;

import dev.sluice.Limit;
import dev.sluice.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.web.SluiceConfig;
import dev.sluice.web.SluiceConfig.ForwardedHeader;
import dev.sluice.web.SluiceConfig.HeaderStyle;
import dev.sluice.web.CallerResolver;
import dev.sluice.web.HttpAnswers;
import dev.sluice.internal.Classes;
import dev.sluice.internal.OptionalMetrics;
import dev.sluice.web.SharedStores;
import jakarta.annotation.PreDestroy;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.container.DynamicFeature;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Configuration;
import jakarta.ws.rs.core.FeatureContext;
import jakarta.ws.rs.ext.Provider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Applies {@link RateLimit} to JAX-RS resource methods. Register it like Jersey's
 * {@code RolesAllowedDynamicFeature}:
 *
 * <pre>{@code
 * ResourceConfig app = new ResourceConfig(Orders.class)
 *         .register(RateLimitFeature.class)                          // store etc. from properties
 *         .property("sluice.store", "redis://127.0.0.1:6379")        // default: memory
 *         .property("sluice.timeout", "50ms")                        // default: 100ms
 *         .property("sluice.headers", "both")                        // default: legacy
 *         .property("sluice.partition-key", "true")                  // default: false
 *         .property("sluice.trusted-proxies", "10.0.0.0/8")          // default: none
 *         .property("sluice.forwarded-header", "forwarded")          // default: x-forwarded-for
 *         .property("sluice.ipv6-prefix", "64");                     // default: 64
 * // or, with a store you own (the feature never closes it):
 * app.register(new RateLimitFeature(RedisStore.of(redisson)));
 * }</pre>
 *
 * <p>At start-up, for each resource method, the feature reads the annotations once, builds one
 * {@link RateLimiter} for all of the method's limits (decided together, atomically, in one round
 * trip) and one caller resolver, and registers one pre-built filter; un-annotated methods get
 * nothing. A bad annotation or property fails application start-up with an
 * {@link IllegalArgumentException} naming the resource method (or property), the attribute and
 * the raw value; the application never starts half-limited.
 *
 * <p>Per request, the filter runs at priority {@link #PRIORITY}: after authentication filters
 * ({@link Priorities#AUTHENTICATION}), so that {@code key = "principal"} sees the user set by
 * {@code SecurityContext}, and before authorization ({@link Priorities#AUTHORIZATION}), so that
 * forbidden requests are metered too.
 * <ul>
 *   <li>allowed: the resource answers and the rate-limit headers are added (also to responses of
 *       asynchronous resources), listing the decisions of every Sluice layer of the request (a
 *       servlet filter in front of the resource, too);
 *   <li>rejected: {@code 429}, {@code Retry-After} in whole seconds (at least 1), the headers with
 *       remaining 0 and an RFC 9457 {@code application/problem+json} body;
 *   <li>store failed or later than {@code sluice.timeout}: with failure mode {@code OPEN} the request
 *       goes through without rate-limit headers (logged and counted); with {@code CLOSED},
 *       {@code 503} with {@code Retry-After} and a problem body.
 * </ul>
 *
 * <p>The key source {@code ip} is the socket peer, or, when the peer is in
 * {@code sluice.trusted-proxies}, the client named by the one header of
 * {@code sluice.forwarded-header} ({@code x-forwarded-for}, the default, or {@code forwarded}: the
 * other header is never read), walked from the right; an {@code unknown} or obfuscated hop makes
 * the proxy that wrote it the caller. Addresses are normalised (ports, IPv4-mapped IPv6, case,
 * compression, zone ids) and an IPv6 client is keyed by its {@code sluice.ipv6-prefix} network
 * (default {@code /64}), an IPv4 client by its address. JAX-RS has no portable remote address: on a servlet container the
 * feature reads it from the injected {@code HttpServletRequest}; on any other runtime it is
 * {@code "unknown"}, so all callers keyed by {@code ip} share one budget there: key such routes by
 * {@code header:NAME} or {@code principal} instead.
 *
 * <p>Annotated {@link Provider}, so a runtime that scans for providers (e.g. Jersey's
 * {@code jersey.config.server.provider.packages} naming {@code dev.sluice.jaxrs}) registers it by
 * itself, as a class.
 *
 * <p>Stores named by {@code sluice.store} are opened once per application (one client for every
 * method) and closed at application shutdown, in the {@link PreDestroy} callback the runtime calls
 * on providers it manages: register the feature <em>class</em> (or let CDI create it) for that. A
 * store given to the constructor belongs to the caller and is never closed here.
 */
@Provider
public final class RateLimitFeature implements DynamicFeature {

    /** The priority of the rate-limit filter: after authentication, before authorization. */
    public static final int PRIORITY = Priorities.AUTHENTICATION + 500;

    private static final Logger LOG = LoggerFactory.getLogger(RateLimitFeature.class);
    private static final String PREFIX = "sluice.";
    private static final Set<String> APPLICATION_PROPERTIES = Set.of("store", "timeout", "headers", "trusted-proxies",
            "forwarded-header", "ipv6-prefix", "mode", "metrics", "partition-key");
    private static final boolean SERVLET_API = Classes.present("jakarta.servlet.http.HttpServletRequest",
            RateLimitFeature.class.getClassLoader());

    private final RateLimitStore givenStore;
    private Settings settings; // parsed on the first annotated method, guarded by this
    private String acquiredStore; // the sluice.store value this feature holds in SharedStores, guarded by this

    /** The application-wide settings, from the {@code sluice.*} properties. */
    private record Settings(RateLimitStore store, Duration timeout, HeaderStyle headers, List<String> trustedProxies,
                            ForwardedHeader forwardedHeader, int ipv6Prefix, boolean shadow, boolean metrics,
                            boolean partitionKey) {
    }

    /** A feature taking {@code sluice.store} (default {@code memory}) and the other settings from the application's properties. */
    public RateLimitFeature() {
        this.givenStore = null;
    }

    /**
     * A feature deciding on {@code store}, which it never closes; {@code sluice.store} is then
     * ignored, the other {@code sluice.*} properties apply.
     */
    public RateLimitFeature(RateLimitStore store) {
        this.givenStore = Objects.requireNonNull(store, "store");
    }

    @Override
    public void configure(ResourceInfo resourceInfo, FeatureContext context) {
        try {
            Routes.Plan plan = Routes.read(resourceInfo.getResourceClass(), resourceInfo.getResourceMethod());
            if (plan == null) {
                return;
            }
            Settings app = settings(context.getConfiguration());
            RateLimiter limiter;
            try {
                String name = plan.limits().stream().map(Limit::policy).collect(Collectors.joining("+"));
                limiter = RateLimiter.builder().limits(plan.limits()).store(app.store()).failureMode(plan.failureMode())
                        .timeout(app.timeout()).shadowMode(app.shadow()).listener(OptionalMetrics.listener(app.metrics(), name))
                        .build();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(Routes.where(resourceInfo.getResourceClass(),
                        resourceInfo.getResourceMethod()) + ": " + e.getMessage(), e);
            }
            LimitFilter filter = new LimitFilter(limiter, new CallerResolver(plan.key(), app.trustedProxies(),
                    app.forwardedHeader(), app.ipv6Prefix()), app.headers(), app.partitionKey());
            HttpAnswers.warnOfNonTokenPolicies(plan.limits(), app.headers(), Routes.where(resourceInfo.getResourceClass(),
                    resourceInfo.getResourceMethod()));
            context.register(filter, Map.of(ContainerRequestFilter.class, PRIORITY, ContainerResponseFilter.class, PRIORITY));
            if (SERVLET_API) {
                ServletAddressRegistration.register(context, PRIORITY - 1);
            }
            LOG.debug("Rate-limiting {}.{}: {}", resourceInfo.getResourceClass().getName(),
                    resourceInfo.getResourceMethod().getName(), limiter);
        } catch (RuntimeException e) {
            // Start-up fails; a runtime that never started the application will not call close().
            close();
            throw e;
        }
    }

    private synchronized Settings settings(Configuration configuration) {
        if (settings == null) {
            for (String name : configuration.getPropertyNames()) {
                if (name.startsWith(PREFIX) && !APPLICATION_PROPERTIES.contains(name.substring(PREFIX.length()))) {
                    throw new IllegalArgumentException("JAX-RS property '" + name + "' is not a Sluice application "
                            + "property; known: sluice.store, sluice.timeout, sluice.headers, sluice.trusted-proxies, "
                            + "sluice.forwarded-header, sluice.ipv6-prefix, sluice.mode, sluice.metrics, "
                            + "sluice.partition-key (the others are @RateLimit attributes)");
                }
            }
            Function<String, String> property = name -> {
                Object value = configuration.getProperty(PREFIX + name);
                return value == null || value.toString().isBlank() ? null : value.toString().trim();
            };
            Duration timeout = parse(property, "timeout",
                    SluiceConfig::parseTimeout, SluiceConfig.DEFAULT_TIMEOUT);
            HeaderStyle headers = parse(property, "headers", SluiceConfig::parseHeaders, HeaderStyle.LEGACY);
            List<String> trusted = parse(property, "trusted-proxies", SluiceConfig::parseTrustedProxies, List.of());
            ForwardedHeader forwardedHeader = parse(property, "forwarded-header", SluiceConfig::parseForwardedHeader,
                    ForwardedHeader.X_FORWARDED_FOR);
            int ipv6Prefix = parse(property, "ipv6-prefix", SluiceConfig::parseIpv6Prefix, SluiceConfig.DEFAULT_IPV6_PREFIX);
            boolean shadow = parse(property, "mode", SluiceConfig::parseShadowMode, false);
            boolean metrics = parse(property, "metrics", v -> SluiceConfig.parseBoolean("metrics", v), true);
            boolean partitionKey = parse(property, "partition-key", v -> SluiceConfig.parseBoolean("partition-key", v), false);
            RateLimitStore store = givenStore;
            if (store == null) {
                String name = parse(property, "store", SluiceConfig::parseStore, "memory");
                store = parse(n -> name, "store", SharedStores.application()::acquire, null);
                acquiredStore = name;
            }
            settings = new Settings(store, timeout, headers, trusted, forwardedHeader, ipv6Prefix, shadow, metrics,
                    partitionKey);
        }
        return settings;
    }

    /** Parses one property through the vocabulary's parser, prefixing where the value came from. */
    private static <T> T parse(Function<String, String> property, String name, Function<String, T> parser, T fallback) {
        String raw = property.apply(name);
        if (raw == null) {
            return fallback;
        }
        try {
            return parser.apply(raw);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("JAX-RS property '" + PREFIX + name + "': " + e.getMessage(), e);
        }
    }

    /** Closes the stores this feature opened from {@code sluice.store}; called by the runtime at application shutdown. */
    @PreDestroy
    synchronized void close() {
        if (acquiredStore != null) {
            SharedStores.application().release(acquiredStore);
            acquiredStore = null;
            settings = null;
        }
    }

    /** Keeps the servlet-typed class out of {@link RateLimitFeature}'s own linkage. */
    private static final class ServletAddressRegistration {
        static void register(FeatureContext context, int priority) {
            context.register(ServletClientAddress.class, priority);
        }
    }
}
