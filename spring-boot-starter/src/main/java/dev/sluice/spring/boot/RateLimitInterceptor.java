package dev.sluice.spring.boot;

import dev.sluice.servlet.internal.ServletRequestView;
import dev.sluice.jaxrs.RateLimit;
import dev.sluice.web.Answer;
import dev.sluice.web.HttpLimiter;
import dev.sluice.web.Verdict;
import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.web.internal.Rejection;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.AsyncHandlerInterceptor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
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
final class RateLimitInterceptor implements AsyncHandlerInterceptor, StoreCircuits {

    /** The request attribute holding the request's {@link Decided}. */
    private static final String DECIDED = RateLimitInterceptor.class.getName() + ".decided";
    /** The cache's mark for a handler method without {@code @RateLimit}. */
    private static final HttpLimiter NONE = null;

    private final HandlerGuards guards;

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

    RateLimitInterceptor(SluiceSettings settings, Supplier<Object> meterRegistry, ApplicationPolicies policies,
                         FilterRegistrations.Resolvers resolvers) {
        this.guards = new HandlerGuards(settings, meterRegistry, policies, resolvers, "Spring MVC",
                Rejection.SEND_ERROR);
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
        HttpLimiter built = guards.built(method.getMethod());
        return built == null ? null : decided.completions.get(built);
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
        return guards.guard(handler);
    }

    @Override
    public List<FilterRegistrations.Circuit> circuits() {
        return guards.circuits();
    }

    /** Unlists the limiters and releases the application's store, if a handler's limiter acquired it. */
    void close() {
        guards.close();
    }
}
