package dev.sluice.spring.boot;

import dev.sluice.servlet.internal.ServletRequestView;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.jaxrs.RateLimit;
import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.web.internal.AfterResponse;
import dev.sluice.web.internal.Guard;
import dev.sluice.web.internal.HttpAnswer;
import dev.sluice.web.internal.ParameterException;
import dev.sluice.web.internal.PolicyNames;
import dev.sluice.web.internal.Rejection;
import dev.sluice.web.internal.RouteSpec;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * {@link RateLimit @RateLimit} on Spring MVC handler methods: the annotation of the JAX-RS feature,
 * read the same way (on the method; else on its controller class or the nearest superclass that has
 * one), with the same default policy names ({@code <SimpleClassName>.<method>~<hash>}), repeated
 * limits decided together, all or nothing. One {@link Guard} per handler method, built when the
 * application starts (or on a handler's first request), never per request. The application's
 * {@code sluice.*} properties ({@code store}, {@code timeout}, {@code headers}, ...) apply. Each
 * guard lists its policies in the application's policy registry.
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
    private static final Guard NONE = null;

    private final SluiceSettings settings;
    private final Supplier<Object> meterRegistry;
    private final ApplicationPolicies policies;
    private final Map<Method, List<Guard>> guards = new ConcurrentHashMap<>();
    private Shared shared; // guarded by this
    private Guard firstGuard; // guarded by this: the others share its once-only warnings

    /**
     * The guards that decided one request and what each leaves to do when its handler's dispatch
     * completes ({@link AfterResponse#NONE}: nothing). A forward nests dispatches on one thread;
     * an async dispatch follows the one before it: no two touch it at once.
     */
    private static final class Decided {
        private final Map<Guard, AfterResponse> completions = new java.util.IdentityHashMap<>(4);

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
    private record Shared(WebSettings web, Rejection reject, RateLimitStore store) {
    }

    RateLimitInterceptor(SluiceSettings settings, Supplier<Object> meterRegistry, ApplicationPolicies policies) {
        this.settings = settings;
        this.meterRegistry = meterRegistry;
        this.policies = policies;
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
            throws IOException {
        if (!(handler instanceof HandlerMethod method)) {
            return true; // not a controller
        }
        Guard guard = guard(method);
        if (guard == NONE) {
            return true;
        }
        Decided decided = Decided.of(request);
        if (decided.completions.containsKey(guard)) {
            return true; // a later (async, error) dispatch to a handler this request already decided
        }
        decided.completions.put(guard, AfterResponse.NONE);
        HttpAnswer answer = guard.check(new ServletRequestView(request));
        for (HttpAnswer.Header header : answer.headers()) {
            response.setHeader(header.name(), header.value());
        }
        if (answer.proceeds()) {
            if (answer.afterResponse() != AfterResponse.NONE) {
                decided.completions.put(guard, AfterResponse.once(answer.afterResponse()));
            }
            return true;
        }
        if (shared().reject() == Rejection.SEND_ERROR) {
            response.sendError(answer.status());
            return false;
        }
        byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
        response.setStatus(answer.status());
        response.setContentType(HttpAnswer.PROBLEM_JSON);
        response.setContentLength(body.length);
        response.getOutputStream().write(body);
        return false;
    }

    @Override
    public void afterConcurrentHandlingStarted(HttpServletRequest request, HttpServletResponse response, Object handler) {
        AfterResponse completion = completion(request, handler);
        if (completion != AfterResponse.NONE && request.isAsyncStarted()) {
            request.getAsyncContext().addListener(new End(completion, response));
        }
    }

    @Override
    public void afterCompletion(HttpServletRequest request, HttpServletResponse response, Object handler, Exception ex) {
        AfterResponse completion = completion(request, handler);
        if (completion != AfterResponse.NONE && !request.isAsyncStarted()) {
            completion.complete(ex == null ? response.getStatus() : failed(response));
        }
    }

    /** What is left to do when {@code handler}'s dispatch of the request completes; once only, by {@link AfterResponse#once}. */
    private AfterResponse completion(HttpServletRequest request, Object handler) {
        if (!(handler instanceof HandlerMethod method) || !(request.getAttribute(DECIDED) instanceof Decided decided)) {
            return AfterResponse.NONE;
        }
        List<Guard> cached = guards.get(method.getMethod());
        AfterResponse completion = cached == null || cached.isEmpty() ? null : decided.completions.get(cached.get(0));
        return completion == null ? AfterResponse.NONE : completion;
    }

    /** The status a failed response counts as: once committed, the one sent; before that, 500. */
    private static int failed(HttpServletResponse response) {
        return response.isCommitted() ? response.getStatus() : 500;
    }

    /** Settles an asynchronous request that ends otherwise than by its async dispatch completing. */
    private record End(AfterResponse completion, HttpServletResponse response) implements AsyncListener {
        @Override
        public void onComplete(AsyncEvent event) {
            completion.complete(response.getStatus());
        }

        @Override
        public void onError(AsyncEvent event) {
            completion.complete(failed(response));
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

    /** The guard of a handler method, built on first use; {@link #NONE} when it is not rate-limited. */
    Guard guard(HandlerMethod handler) {
        List<Guard> cached = guards.get(handler.getMethod());
        if (cached == null) {
            Guard built = build(handler.getBeanType(), handler.getMethod());
            cached = built == null ? List.of() : List.of(built);
            List<Guard> raced = guards.putIfAbsent(handler.getMethod(), cached);
            if (raced != null) {
                cached = raced;
            } else if (built != null) {
                Shared app = shared();
                policies.register(built, app.store(), app.web().store()); // the guard that decides, once
            }
        }
        return cached.isEmpty() ? NONE : cached.get(0);
    }

    /**
     * The guard of a handler method, {@code null} if neither it nor its class is annotated.
     *
     * @throws IllegalArgumentException naming the method, the attribute and the value
     */
    private Guard build(Class<?> beanType, Method method) {
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
        List<RouteSpec> routes = new ArrayList<>();
        try {
            for (int i = 0; i < annotations.length; i++) {
                RateLimit a = annotations[i];
                String policy = a.policy().isBlank()
                        ? PolicyNames.forResourceMethod(base, signature, annotations.length == 1 ? "" : "-" + (i + 1))
                        : a.policy().trim();
                routes.add(RouteSpec.of(policy, a.algorithm(), a.limit(), a.burst(), a.cost(), a.key(), a.failureMode(),
                        String.join(",", a.tiers()), String.join(",", a.methods()))
                        .withCompletion(a.charge(), a.chargeWhen(), a.lease()));
            }
            Shared app = shared();
            Guard guard = Guard.of(routes, app.web(), app.store(), where, meterRegistry.get());
            LOG.debug("Rate-limiting {}.{}: {}", beanType.getName(), method.getName(), guard);
            return shareWarnings(guard);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
        }
    }


    private synchronized Shared shared() {
        if (shared == null) {
            WebSettings web;
            Rejection reject;
            try {
                web = WebSettings.parse(settings.applicationLookup());
                reject = Rejection.parse(settings.applicationLookup(), "Spring MVC", Rejection.PROBLEM, Rejection.SEND_ERROR);
            } catch (ParameterException e) {
                throw new IllegalArgumentException(settings.describe(e.getMessage(), null), e);
            }
            RateLimitStore store;
            try {
                store = StoreRegistry.application().acquire(web.store());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("property 'sluice.store': " + e.getMessage(), e);
            }
            shared = new Shared(web, reject, store);
        }
        return shared;
    }

    private synchronized Guard shareWarnings(Guard guard) {
        if (firstGuard == null) {
            firstGuard = guard;
            return guard;
        }
        return guard.sharingWarningsWith(firstGuard);
    }

    /** The circuits of the guards built so far, on the application's store. */
    List<FilterRegistrations.Circuit> circuits() {
        String store = settings.store(null);
        return guards.entrySet().stream().filter(e -> !e.getValue().isEmpty() && e.getValue().get(0).limiter() != null)
                .map(e -> new FilterRegistrations.Circuit(store, "handler method '" + e.getKey().getDeclaringClass().getName()
                        + "." + e.getKey().getName() + "'", e.getValue().get(0).limiter()::storeCircuitOpen))
                .toList();
    }

    /** Unlists the guards and releases the application's store, if a handler's guard acquired it. */
    synchronized void close() {
        guards.values().forEach(built -> built.forEach(policies::unregister));
        guards.clear();
        if (shared != null) {
            StoreRegistry.application().release(shared.web().store());
            shared = null;
        }
        firstGuard = null;
    }
}
