package dev.sluice.spring.boot;

import dev.sluice.jaxrs.RateLimit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.HttpLimiter;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.web.internal.ParameterException;
import dev.sluice.web.internal.PolicyNames;
import dev.sluice.web.internal.Rejection;
import dev.sluice.web.internal.StoreRegistry;
import dev.sluice.web.internal.WebSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.method.HandlerMethod;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The limiters of the {@link RateLimit @RateLimit} handler methods of one application, for Spring MVC
 * ({@link RateLimitInterceptor}) and WebFlux ({@link RateLimitHandlerFilter}) alike: the annotation
 * of the JAX-RS feature, read the same way (on the method; else on its controller class or the
 * nearest superclass that has one), with the same default policy names
 * ({@code <SimpleClassName>.<method>~<hash>}), repeated limits decided together, all or nothing. One
 * {@link HttpLimiter} per handler method, built when the application starts (or on a handler's
 * first request), never per request, cached by the handler's {@link Method}. The application's
 * {@code sluice.*} properties ({@code store}, {@code timeout}, {@code headers}, ...) apply. Each
 * limiter lists its policies in the application's policy registry.
 */
final class HandlerGuards implements StoreCircuits {

    private static final Logger LOG = LoggerFactory.getLogger(HandlerGuards.class);

    private final SluiceSettings settings;
    private final Supplier<Object> meterRegistry;
    private final ApplicationPolicies policies;
    private final FilterRegistrations.Resolvers resolvers;
    private final String adapter;
    private final List<Rejection> rejections;
    /** The handler methods of which a limit answers 503 when the store fails ({@code failureMode = CLOSED}). */
    private final Set<Method> failingClosed = ConcurrentHashMap.newKeySet();
    private final Map<Method, List<HttpLimiter>> guards = new ConcurrentHashMap<>();
    private Shared shared; // guarded by this
    private HttpLimiter firstGuard; // guarded by this: the others share its once-only warnings

    /** The application-wide settings every handler's guard uses, and the store they name. */
    private record Shared(WebSettings web, Rejection reject, RateLimitStore store, KeyResolver keyResolver,
                          LimitResolver limitResolver) {
    }

    /**
     * @param adapter    the adapter's name in messages ({@code Spring MVC}, {@code Spring WebFlux})
     * @param rejections the {@code reject} forms it supports besides {@code problem}
     */
    HandlerGuards(SluiceSettings settings, Supplier<Object> meterRegistry, ApplicationPolicies policies,
                  FilterRegistrations.Resolvers resolvers, String adapter, Rejection... rejections) {
        this.settings = settings;
        this.meterRegistry = meterRegistry;
        this.policies = policies;
        this.resolvers = resolvers;
        this.adapter = adapter;
        this.rejections = List.of(rejections);
    }

    /** Whether {@code method}'s limiter, or that it has none, is known: {@link #guard} would not build. */
    boolean known(Method method) {
        return guards.containsKey(method);
    }

    /** The limiter already built for {@code method}, {@code null} if none (yet, or not rate-limited). */
    HttpLimiter built(Method method) {
        List<HttpLimiter> cached = guards.get(method);
        return cached == null || cached.isEmpty() ? null : cached.get(0);
    }

    private Rejection[] forms() {
        List<Rejection> all = new ArrayList<>(List.of(Rejection.PROBLEM));
        all.addAll(rejections);
        return all.toArray(new Rejection[0]);
    }

    private String[] rejectForms() {
        return rejections.stream().map(Rejection::configName).toArray(String[]::new);
    }

    /** The limiter of a handler method, built on first use; {@code null} when it is not rate-limited. */
    HttpLimiter guard(HandlerMethod handler) {
        List<HttpLimiter> cached = guards.get(handler.getMethod());
        if (cached == null) {
            HttpLimiter built = build(handler.getBeanType(), handler.getMethod());
            cached = built == null ? List.of() : List.of(built);
            List<HttpLimiter> raced = guards.putIfAbsent(handler.getMethod(), cached);
            if (raced != null) {
                cached = raced;
                if (built != null) {
                    built.close(); // leaves the registry: the limiter that decides is listed once
                }
            }
        }
        return cached.isEmpty() ? null : cached.get(0);
    }

    /**
     * The guard of a handler method, {@code null} if neither it nor its class is annotated.
     *
     * @throws IllegalArgumentException naming the method, the attribute and the value
     */
    private HttpLimiter build(Class<?> beanType, Method method) {
        RateLimit[] annotations = method.getAnnotationsByType(RateLimit.class);
        for (Class<?> type = beanType; annotations.length == 0 && type != null && type != Object.class;
             type = type.getSuperclass()) {
            annotations = type.getDeclaredAnnotationsByType(RateLimit.class); // method annotations replace class ones
        }
        if (annotations.length == 0) {
            return null;
        }
        String where = "@RateLimit on handler method '" + beanType.getName() + "." + method.getName() + "'";
        String base = beanType.getSimpleName() + "." + method.getName();
        String signature = PolicyNames.signature(beanType, method);
        HttpLimiter.Builder builder = HttpLimiter.builder(where);
        try {
            for (int i = 0; i < annotations.length; i++) {
                RateLimit a = annotations[i];
                String policy = a.policy().isBlank()
                        ? PolicyNames.forResourceMethod(base, signature, annotations.length == 1 ? "" : "-" + (i + 1))
                        : a.policy().trim();
                builder.route(parameters(a, policy)::get);
                if (a.failureMode() == dev.sluice.FailureMode.CLOSED) {
                    failingClosed.add(method);
                }
            }
            Shared app = shared();
            if (app.keyResolver() != null) {
                builder.keyResolver(app.keyResolver());
            }
            if (app.limitResolver() != null) {
                builder.limitResolver(app.limitResolver());
            }
            HttpLimiter guard = build(builder.parameters(settings.applicationLookup()).store(app.store())
                    .rejections(adapter, rejectForms()).meterRegistry(meterRegistry.get())
                    .registry(policies));
            LOG.debug("Rate-limiting {}.{}: {}", beanType.getName(), method.getName(), guard);
            return guard;
        } catch (SluiceConfigurationException e) {
            throw e; // the application's settings, not this handler's annotation
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
    }

    /** One {@code @RateLimit}'s attributes as the route parameters they are; {@code burst = 0}: absent. */
    static Map<String, String> parameters(RateLimit a, String policy) {
        Map<String, String> p = new HashMap<>();
        p.put("policy", policy);
        p.put("algorithm", a.algorithm().configName());
        p.put("limit", a.limit());
        p.put("burst", a.burst() == 0 ? null : Long.toString(a.burst()));
        p.put("cost", Long.toString(a.cost()));
        p.put("key", a.key());
        p.put("failure-mode", a.failureMode().configName());
        p.put("tier-limits", String.join(",", a.tiers()));
        p.put("methods", String.join(",", a.methods()));
        p.put("charge", a.charge());
        p.put("charge-when", a.chargeWhen());
        p.put("lease", a.lease());
        return p;
    }


    private synchronized Shared shared() {
        if (shared == null) {
            WebSettings web;
            Rejection reject;
            try {
                web = WebSettings.parse(settings.applicationLookup());
                reject = Rejection.parse(settings.applicationLookup(), adapter, forms());
            } catch (ParameterException e) {
                throw settings.failure(settings.describe(e.getMessage(), null), null, e);
            }
            KeyResolver key = resolver(SluiceSettings.KEY_RESOLVER, settings.keyResolver(null),
                    resolvers::keyResolver);
            LimitResolver limits = resolver(SluiceSettings.LIMIT_RESOLVER, settings.limitResolver(null),
                    resolvers::limitResolver);
            RateLimitStore store;
            try {
                store = StoreRegistry.application().acquire(web.store());
            } catch (IllegalArgumentException e) {
                throw settings.failure("property 'sluice.store': " + e.getMessage(), null, e);
            }
            shared = new Shared(web, reject, store, key, limits);
        }
        return shared;
    }

    /** The resolver bean {@code sluice.<which>} names, {@code null} when it names none. */
    private static <T> T resolver(String which, String bean, java.util.function.Function<String, T> lookup) {
        if (bean == null) {
            return null;
        }
        try {
            return lookup.apply(bean);
        } catch (RuntimeException e) {
            String property = SluiceSettings.PREFIX + which;
            throw new SluiceConfigurationException("property '" + property + "' names no bean of its type: "
                    + e.getMessage() + ", got '" + bean + "'", property, bean, null,
                    "Name a bean of the application in '" + property + "', or remove it.", e);
        }
    }

    /** Builds with the first limiter's once-only warnings, which all limiters share. */
    private synchronized HttpLimiter build(HttpLimiter.Builder builder) {
        if (firstGuard == null) {
            firstGuard = builder.build();
            return firstGuard;
        }
        return builder.sharingWarningsWith(firstGuard).build();
    }

    /** The circuits of the limiters built so far, on the application's store (a concurrency limit's never opens). */
    @Override
    public List<FilterRegistrations.Circuit> circuits() {
        String store = settings.store(null);
        return guards.entrySet().stream().filter(e -> !e.getValue().isEmpty())
                .map(e -> new FilterRegistrations.Circuit(store,
                        "handler method '" + e.getKey().getDeclaringClass().getName()
                        + "." + e.getKey().getName() + "'", e.getValue().get(0)::storeCircuitOpen,
                        failingClosed.contains(e.getKey())))
                .toList();
    }

    /** Unlists the limiters and releases the application's store, if a handler's limiter acquired it. */
    synchronized void close() {
        guards.values().forEach(built -> built.forEach(HttpLimiter::close));
        guards.clear();
        if (shared != null) {
            StoreRegistry.application().release(shared.web().store());
            shared = null;
        }
        firstGuard = null;
    }
}
