package dev.sluice.spring.boot;

import dev.sluice.servlet.internal.ServletRequestView;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.jaxrs.RateLimit;
import dev.sluice.web.Answer;
import dev.sluice.web.HttpLimiter;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.Verdict;
import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.web.internal.ParameterException;
import dev.sluice.web.internal.PolicyNames;
import dev.sluice.web.internal.Rejection;
import dev.sluice.web.internal.StoreRegistry;
import dev.sluice.web.internal.WebSettings;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.AsyncHandlerInterceptor;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * {@link RateLimit @RateLimit} on Spring MVC handler methods: the annotation of the JAX-RS feature,
 * read the same way (on the method; else on its controller class or the nearest superclass that has
 * one), with the same default policy names ({@code <SimpleClassName>.<method>~<hash>}), repeated
 * limits decided together, all or nothing. One {@link HttpLimiter} per handler method, built when the
 * application starts (or on a handler's first request), never per request. The application's
 * {@code sluice.*} properties ({@code store}, {@code timeout}, {@code headers}, ...) apply. Each
 * limiter lists its policies in the application's policy registry.
 *
 * <p>Each handler's limit is decided once per request, whichever dispatch reaches it: a
 * {@code forward:} or include to another {@code @RateLimit} handler is decided by that handler's
 * limit too, while a later async or error dispatch to a handler already decided is not decided
 * again.
 *
 * <p>{@code charge=after} and concurrency leases are settled when the response is complete: when
 * the handler's dispatch completes ({@code afterCompletion}, with the response's status, or 500
 * for an exception before the response was committed), or, for an asynchronous handler
 * ({@code DeferredResult}, {@code Callable}, streaming), when its async dispatch completes or the
 * request's {@code AsyncContext} completes, fails or times out, whichever comes first.
 */
final class RateLimitInterceptor implements AsyncHandlerInterceptor {

    private static final Logger LOG = LoggerFactory.getLogger(RateLimitInterceptor.class);
    /** The request attribute holding the request's {@link Decided}. */
    private static final String DECIDED = RateLimitInterceptor.class.getName() + ".decided";
    /** The cache's mark for a handler method without {@code @RateLimit}. */
    private static final HttpLimiter NONE = null;

    private final SluiceSettings settings;
    private final Supplier<Object> meterRegistry;
    private final ApplicationPolicies policies;
    private final FilterRegistrations.Resolvers resolvers;
    /** The handler methods of which a limit answers 503 when the store fails ({@code failureMode = CLOSED}). */
    private final Set<Method> failingClosed = ConcurrentHashMap.newKeySet();
    private final Map<Method, List<HttpLimiter>> guards = new ConcurrentHashMap<>();
    private Shared shared; // guarded by this
    private HttpLimiter firstGuard; // guarded by this: the others share its once-only warnings

    /**
     * The limiters that decided one request and the verdict whose end each awaits when its
     * handler's dispatch completes ({@code null}: nothing). A forward nests dispatches on one
     * thread; an async dispatch follows the one before it: no two touch it at once.
     */
    private static final class Decided {
        private final Map<HttpLimiter, Verdict> completions = new java.util.IdentityHashMap<>(4);

        static Decided of(HttpServletRequest request) {
            if (request.getAttribute(DECIDED) instanceof Decided decided) {
                return decided;
            }
            Decided decided = new Decided();
            request.setAttribute(DECIDED, decided);
            return decided;
        }
    }

    /** The application-wide settings every handler's guard uses, and the store they name. */
    private record Shared(WebSettings web, Rejection reject, RateLimitStore store, KeyResolver keyResolver,
                          LimitResolver limitResolver) {
    }

    RateLimitInterceptor(SluiceSettings settings, Supplier<Object> meterRegistry, ApplicationPolicies policies,
                         FilterRegistrations.Resolvers resolvers) {
        this.settings = settings;
        this.meterRegistry = meterRegistry;
        this.policies = policies;
        this.resolvers = resolvers;
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
            throws IOException {
        if (!(handler instanceof HandlerMethod method)) {
            return true; // not a controller
        }
        HttpLimiter guard = guard(method);
        if (guard == NONE) {
            return true;
        }
        Decided decided = Decided.of(request);
        if (decided.completions.containsKey(guard)) {
            return true; // a later (async, error) dispatch to a handler this request already decided
        }
        decided.completions.put(guard, null);
        Verdict verdict = await(guard, new ServletRequestView(request));
        Answer answer = verdict.answer();
        for (Answer.Header header : answer.headers()) {
            response.setHeader(header.name(), header.value());
        }
        if (answer.proceeds()) {
            if (verdict.awaitsEnd()) {
                decided.completions.put(guard, verdict);
            }
            return true;
        }
        if (guard.reject().equals(Rejection.SEND_ERROR.configName())) {
            response.sendError(answer.status());
            return false;
        }
        byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
        response.setStatus(answer.status());
        response.setContentType(answer.contentType());
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        return false;
    }

    @Override
    public void afterConcurrentHandlingStarted(HttpServletRequest request, HttpServletResponse response,
            Object handler) {
        Verdict completion = completion(request, handler);
        if (completion != null && request.isAsyncStarted()) {
            request.getAsyncContext().addListener(new End(completion, response));
        }
    }

    @Override
    public void afterCompletion(HttpServletRequest request, HttpServletResponse response, Object handler,
            Exception ex) {
        Verdict completion = completion(request, handler);
        if (completion != null && !request.isAsyncStarted()) {
            completion.responseEnded(ex == null ? response.getStatus() : failed(response));
        }
    }

    /** The verdict awaiting the end of {@code handler}'s dispatch, {@code null}: none; it ends once only. */
    private Verdict completion(HttpServletRequest request, Object handler) {
        if (!(handler instanceof HandlerMethod method) || !(request.getAttribute(DECIDED) instanceof Decided decided)) {
            return null;
        }
        List<HttpLimiter> cached = guards.get(method.getMethod());
        return cached == null || cached.isEmpty() ? null : decided.completions.get(cached.get(0));
    }

    /** The verdict, waited for here: Spring MVC's thread waits, never the seam. */
    private static Verdict await(HttpLimiter limiter, ServletRequestView view) {
        try {
            return limiter.check(view).toCompletableFuture().join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure : e;
        }
    }

    /** The status a failed response counts as: once committed, the one sent; before that, 500. */
    private static int failed(HttpServletResponse response) {
        return response.isCommitted() ? response.getStatus() : 500;
    }

    /** Settles an asynchronous request that ends otherwise than by its async dispatch completing. */
    private record End(Verdict completion, HttpServletResponse response) implements AsyncListener {
        @Override
        public void onComplete(AsyncEvent event) {
            completion.responseEnded(response.getStatus());
        }

        @Override
        public void onError(AsyncEvent event) {
            completion.responseEnded(failed(response));
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            // Ends in onComplete, with the status the container or the application answered.
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            event.getAsyncContext().addListener(this); // the next async cycle drops this cycle's listeners
        }
    }

    /** The limiter of a handler method, built on first use; {@link #NONE} when it is not rate-limited. */
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
        return cached.isEmpty() ? NONE : cached.get(0);
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
                    .rejections("Spring MVC", Rejection.SEND_ERROR.configName()).meterRegistry(meterRegistry.get())
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
                reject = Rejection.parse(settings.applicationLookup(), "Spring MVC", Rejection.PROBLEM,
                        Rejection.SEND_ERROR);
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
    List<FilterRegistrations.Circuit> circuits() {
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
