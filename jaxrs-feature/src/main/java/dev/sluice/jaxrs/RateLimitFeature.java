package dev.sluice.jaxrs;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.web.PolicyRegistry;
import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.web.internal.Guard;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.internal.Parameter;
import dev.sluice.web.internal.ParameterException;
import dev.sluice.web.internal.Rejection;
import dev.sluice.web.internal.StoreRegistry;
import dev.sluice.web.internal.WebSettings;
import dev.sluice.web.internal.ConsoleAccess;
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

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

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
 *         .property("sluice.ipv6-prefix", "64")                      // default: 64
 *         .property("sluice.mode", "enforce")                        // default; shadow: reject nothing
 *         .property("sluice.metrics", "true")                        // default: true (Micrometer)
 *         .property("sluice.local-share", "1")                       // default: 1 (failureMode LOCAL only)
 *         .property("sluice.tier", "role")                           // default: none (@RateLimit tiers)
 *         .property("sluice.exempt", "10.1.2.0/24")                  // default: none
 *         .property("sluice.reject", "exception");                   // default: problem
 * // exception: 429s are thrown as RateLimitExceededException for the application's ExceptionMapper
 * // or, with a store you own (the feature never closes it):
 * app.register(new RateLimitFeature(RedisStore.of(redisson)));
 * }</pre>
 *
 * <p>The properties are the application part of Sluice's one configuration vocabulary
 * ({@link Parameter}), parsed by {@link WebSettings}; the others are {@link RateLimit} attributes.
 * At start-up, for each resource method, the feature reads the annotations once, builds one
 * {@link Guard}: one {@link RateLimiter} for all of the method's limits (decided together,
 * atomically, in one round trip) and one caller resolver, and registers one pre-built filter; un-annotated methods get
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
 *       {@code 503} with {@code Retry-After} and a problem body; with {@code LOCAL}, decided by a
 *       limiter in this JVM with the method's limits scaled by {@code sluice.local-share}, answered as
 *       allowed or rejected above, with the headers of the local decision.
 * </ul>
 *
 * <p>With {@code sluice.reject=exception} a refusal is thrown instead: a
 * {@link RateLimitExceededException} (429, carrying the decision) or a
 * {@code ServiceUnavailableException} (503), without an entity, for the application's
 * {@code ExceptionMapper}; the rate-limit headers and {@code Retry-After} are added to the
 * mapper's response unless it sets them itself. Every request the feature decides carries the
 * properties (on a servlet container, request attributes) of
 * {@link dev.sluice.web.RequestAttributes}. {@link #withKeyResolver} and
 * {@link #withLimitResolver} give the application's own callers and limits.
 *
 * <p>With {@code charge = "after"} the request is decided as it arrives and refunded once its
 * response status is known unless that status is in {@code chargeWhen}; with
 * {@code algorithm = Algorithm.CONCURRENCY} it holds a lease until then. The feature sees that
 * status in its {@code ContainerResponseFilter}: after the resource returned, an asynchronous
 * resource resumed, or an {@code ExceptionMapper} (or a {@code WebApplicationException}'s own
 * response) turned an exception into a response; before the entity is written, so a lease does
 * not cover the streaming of a long entity, and a write that fails later (a client that read the
 * status line of a 401 and reset the connection) changes nothing: the status sent decides. Jersey runs the response
 * filter for an exception no
 * mapper maps too (as 500); a runtime that hands such an exception to the container without
 * running response filters leaves the request charged (as a 500 would be) and its lease held
 * until it expires. Register an {@code ExceptionMapper<Throwable>}, or put the servlet filter in
 * front (which sees the end of every response, exceptions before commit as 500), where that matters.
 *
 * <p>The key source {@code ip} is the socket peer, or, when the peer is in
 * {@code sluice.trusted-proxies}, the client named by the one header of
 * {@code sluice.forwarded-header} ({@code x-forwarded-for}, the default, or {@code forwarded}: the
 * other header is never read), walked from the right; an {@code unknown} or obfuscated hop makes
 * the proxy that wrote it the caller. Addresses are normalised (ports, IPv4-mapped IPv6, case,
 * compression, zone ids) and an IPv6 client is keyed by its {@code sluice.ipv6-prefix} network
 * (default {@code /64}), an IPv4 client by its address. JAX-RS has no portable remote address: on a servlet container
 * the feature reads it from the injected {@code HttpServletRequest}; on any other runtime it is
 * {@code "unknown"}, so all callers keyed by {@code ip} share one budget there: key such routes by
 * {@code header:NAME} or {@code principal} instead.
 *
 * <p>Every route the feature builds is in its {@link #policies() registry}, to see, reset and
 * override live; a {@link ConsoleResource} the application maps serves it as a page and JSON.
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

    /**
     * The application property where the application gives its Micrometer {@code MeterRegistry}
     * (an instance) for {@code sluice.metrics=true}, {@value}; absent: Micrometer's global registry.
     */
    public static final String METER_REGISTRY = dev.sluice.metrics.OptionalMetrics.REGISTRY;

    private static final Logger LOG = LoggerFactory.getLogger(RateLimitFeature.class);
    private static final String PREFIX = "sluice.";
    private static final boolean SERVLET_API = servletApiPresent();

    private final RateLimitStore givenStore;
    /** The application's own caller resolution, or {@code null}. */
    private final KeyResolver keyResolver;
    /** The application's own choice of limits, or {@code null}. */
    private final LimitResolver limitResolver;
    private Settings settings; // parsed on the first annotated method, guarded by this
    private String acquiredStore; // the sluice.store value this feature holds in the StoreRegistry, guarded by this
    private Guard firstGuard; // the others share its once-only warnings, so the feature warns once; guarded by this
    /** Every route this feature built, for {@link #policies()} and the console. */
    private final ApplicationPolicies policies = new ApplicationPolicies();
    /** The guards registered in {@link #policies}, unregistered at {@link #close()}; guarded by this. */
    private final List<Guard> registered = new ArrayList<>();
    /**
     * The console's role, {@code null} for authentication=none; read on the console's first method; guarded by this.
     */
    private String consoleRole;
    private boolean consoleRead; // guarded by this
    /** The console's Host and origin checks; read with its role; guarded by this. */
    private ConsoleAccess consoleAccess;
    private final AtomicBoolean consoleWarnedFiltered = new AtomicBoolean();

    /** The application-wide settings, from the {@code sluice.*} properties, and the store they name. */
    private record Settings(WebSettings web, Rejection reject, RateLimitStore store,
                            Object meterRegistry) {
    }

    /**
     * A feature taking {@code sluice.store} (default {@code memory}) and the other settings from the application's
     * properties.
     */
    public RateLimitFeature() {
        this(null, null, null);
    }

    /**
     * A feature deciding on {@code store}, which it never closes; {@code sluice.store} is then
     * ignored, the other {@code sluice.*} properties apply.
     */
    public RateLimitFeature(RateLimitStore store) {
        this(Objects.requireNonNull(store, "store"), null, null);
    }

    private RateLimitFeature(RateLimitStore store, KeyResolver keyResolver, LimitResolver limitResolver) {
        this.givenStore = store;
        this.keyResolver = keyResolver;
        this.limitResolver = limitResolver;
    }

    /**
     * A copy asking {@code resolver} for each request's caller first, on every rate-limited method
     * (an identity the application derives itself); where it names none, the method's {@code key}
     * decides. For a request property holding the identity as it is, {@code key = "attribute:NAME"}
     * needs no code. Register the copy as an instance.
     */
    public RateLimitFeature withKeyResolver(KeyResolver resolver) {
        return new RateLimitFeature(givenStore, Objects.requireNonNull(resolver, "resolver"), limitResolver);
    }

    /**
     * A copy choosing each request's limits with {@code resolver} on every rate-limited method
     * (plans that {@code tiers} cannot express); a method's own limits apply where it returns
     * {@code null}. The lists it returns are one budget whichever method a request calls: the
     * policy names the stored state. Limiters built for them share the method's store, failure
     * mode, timeout, shadow mode and metrics. Register the copy as an instance.
     */
    public RateLimitFeature withLimitResolver(LimitResolver resolver) {
        return new RateLimitFeature(givenStore, keyResolver, Objects.requireNonNull(resolver, "resolver"));
    }

    @Override
    public void configure(ResourceInfo resourceInfo, FeatureContext context) {
        try {
            Class<?> resourceClass = resourceInfo.getResourceClass();
            if (resourceClass != null && ConsoleResource.class.isAssignableFrom(resourceClass)) {
                String role = consoleRole(context.getConfiguration());
                context.register(new ConsoleFilter(policies, role, consoleAccess, consoleWarnedFiltered),
                        Priorities.AUTHORIZATION);
                if (SERVLET_API) {
                    ServletAddressRegistration.register(context, Priorities.AUTHORIZATION - 1);
                }
                return;
            }
            Routes.Plan plan = Routes.read(resourceClass, resourceInfo.getResourceMethod());
            if (plan == null) {
                return;
            }
            Settings app = settings(context.getConfiguration());
            String where = Routes.where(resourceClass, resourceInfo.getResourceMethod());
            Guard guard;
            try {
                guard = Guard.of(plan.routes(), app.web(), app.store(), where, app.meterRegistry());
                // A method with only a concurrency limit has no rate limits to choose.
                guard = limitResolver == null || guard.limiter() == null ? guard
                        : guard.withLimitResolver(limitResolver);
                guard = keyResolver == null ? guard : guard.withKeyResolver(keyResolver);
                guard = shareWarnings(guard);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
            }
            context.register(new LimitFilter(guard, app.reject()),
                    Map.of(ContainerRequestFilter.class, PRIORITY, ContainerResponseFilter.class, PRIORITY));
            register(guard, app.store(), givenStore == null ? app.web().store() : null);
            if (SERVLET_API) {
                ServletAddressRegistration.register(context, PRIORITY - 1);
            }
            LOG.debug("Rate-limiting {}.{}: {}", resourceClass.getName(), resourceInfo.getResourceMethod().getName(),
                    guard);
        } catch (RuntimeException e) {
            // Start-up fails; a runtime that never started the application will not call close().
            close();
            throw e;
        }
    }

    /**
     * The registry of every policy this feature's resource methods decide (one per feature, so one per
     * application configuration), for operating them live: see them, reset a caller, override a
     * limit. {@link ConsoleResource} serves it as a page and JSON. Routes are registered as the
     * runtime configures the resource methods, at start-up, and removed when the runtime closes the
     * feature. It is not the servlet filters' registry: an application with both maps both consoles.
     */
    public PolicyRegistry policies() {
        return policies;
    }

    private synchronized void register(Guard guard, RateLimitStore store, String storeValue) {
        policies.register(guard, store, storeValue);
        registered.add(guard);
    }

    /** The role {@link ConsoleResource} requires, {@code null} for none; from its properties, checked once. */
    private synchronized String consoleRole(Configuration configuration) {
        if (!consoleRead) {
            Object role = configuration.getProperty(ConsoleResource.ROLE);
            Object authentication = configuration.getProperty(ConsoleResource.AUTHENTICATION);
            String normal = authentication == null ? "required" : authentication.toString().trim()
                    .toLowerCase(Locale.ROOT);
            if (!normal.equals("required") && !normal.equals("none")) {
                throw new IllegalArgumentException("JAX-RS property '" + ConsoleResource.AUTHENTICATION
                        + "' must be required or none, got '" + authentication + "'");
            }
            consoleRole = normal.equals("none") ? null
                    : role == null || role.toString().isBlank() ? ConsoleResource.DEFAULT_ROLE : role.toString().trim();
            Function<String, String> lookup = name -> {
                Object value = configuration.getProperty(name.equals(ConsoleAccess.ALLOWED_HOSTS)
                        ? ConsoleResource.ALLOWED_HOSTS : PREFIX + name);
                return value == null ? null : value.toString();
            };
            try {
                consoleAccess = ConsoleAccess.parse(lookup, consoleRole != null, ConsoleResource.ALLOWED_HOSTS);
            } catch (ParameterException e) {
                throw new IllegalArgumentException("JAX-RS property '" + PREFIX + e.parameter().configName() + "': "
                        + e.getMessage(), e);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("JAX-RS property '" + ConsoleResource.ALLOWED_HOSTS + "': "
                        + e.getMessage(), e);
            }
            consoleRead = true;
            if (consoleRole == null) {
                LOG.warn("Sluice console: {}=none, so anyone who reaches it can reset callers and change limits; "
                        + "protect its path otherwise", ConsoleResource.AUTHENTICATION);
            } else {
                LOG.info("Sluice console: users in role '{}'", consoleRole);
            }
        }
        return consoleRole;
    }

    private synchronized Settings settings(Configuration configuration) {
        if (settings == null) {
            for (String name : configuration.getPropertyNames()) {
                if (name.equals(ConsoleResource.ROLE) || name.equals(ConsoleResource.AUTHENTICATION)
                        || name.equals(ConsoleResource.ALLOWED_HOSTS)) {
                    continue; // the console's own
                }
                if (name.startsWith(PREFIX) && isRouteParameter(name.substring(PREFIX.length()))) {
                    // Such as a web.xml context-param, every servlet filter's default, which Jersey's
                    // servlet hands to the application as a property too.
                    LOG.info("JAX-RS property '{}' is a default of servlet filters; a @RateLimit says its own",
                            name);
                } else if (name.startsWith(PREFIX) && !isApplicationParameter(name.substring(PREFIX.length()))) {
                    throw new IllegalArgumentException("JAX-RS property '" + name + "' is not a Sluice application "
                            + "property; known: " + String.join(", ", Parameter.of(Parameter.Scope.APPLICATION).stream()
                            .map(p -> PREFIX + p.configName()).toList()) + " (the others are @RateLimit attributes)");
                }
            }
            Function<String, String> property = name -> {
                // A given store replaces sluice.store, which is then not even read.
                Object value = givenStore != null && name.equals(Parameter.STORE.configName()) ? null
                        : configuration.getProperty(PREFIX + name);
                return value == null ? null : value.toString();
            };
            WebSettings web;
            Rejection reject;
            try {
                web = WebSettings.parse(property);
                reject = Rejection.parse(property, "the JAX-RS feature", Rejection.PROBLEM, Rejection.EXCEPTION);
            } catch (ParameterException e) {
                throw new IllegalArgumentException("JAX-RS property '" + PREFIX + e.parameter().configName() + "': "
                        + e.getMessage(), e);
            }
            RateLimitStore store = givenStore;
            if (store == null) {
                try {
                    store = StoreRegistry.application().acquire(web.store());
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("JAX-RS property '" + PREFIX + "store': " + e.getMessage(), e);
                }
                acquiredStore = web.store();
            }
            settings = new Settings(web, reject, store, configuration.getProperty(METER_REGISTRY));
        }
        return settings;
    }

    /** The guard, sharing the once-only warnings of this feature's first. */
    private synchronized Guard shareWarnings(Guard guard) {
        if (firstGuard == null) {
            firstGuard = guard;
            return guard;
        }
        return guard.sharingWarningsWith(firstGuard);
    }

    private static boolean isRouteParameter(String name) {
        return Parameter.of(Parameter.Scope.ROUTE).stream().anyMatch(p -> p.configName().equals(name));
    }

    private static boolean isApplicationParameter(String name) {
        return Parameter.of(Parameter.Scope.APPLICATION).stream().anyMatch(p -> p.configName().equals(name));
    }

    /**
     * Closes the stores this feature opened from {@code sluice.store}; called by the runtime at application shutdown.
     */
    @PreDestroy
    synchronized void close() {
        firstGuard = null;
        registered.forEach(policies::unregister);
        registered.clear();
        if (acquiredStore != null) {
            StoreRegistry.application().release(acquiredStore);
            acquiredStore = null;
            settings = null;
        }
    }

    /** Whether the servlet API is on this feature's class path, asked without initialising it. */
    private static boolean servletApiPresent() {
        try {
            Class.forName("jakarta.servlet.http.HttpServletRequest", false, RateLimitFeature.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** Keeps the servlet-typed class out of {@link RateLimitFeature}'s own linkage. */
    private static final class ServletAddressRegistration {
        static void register(FeatureContext context, int priority) {
            context.register(ServletClientAddress.class, priority);
        }
    }
}
