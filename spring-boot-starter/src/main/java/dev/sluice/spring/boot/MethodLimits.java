package dev.sluice.spring.boot;

import dev.sluice.jaxrs.RateLimit;
import dev.sluice.jaxrs.RateLimitExceededException;
import dev.sluice.web.Answer;
import dev.sluice.web.HttpLimiter;
import dev.sluice.web.RequestView;
import dev.sluice.web.Verdict;
import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.web.internal.PolicyNames;
import dev.sluice.web.internal.Rejection;
import jakarta.ws.rs.ServiceUnavailableException;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code @RateLimit} on a method of a Spring bean that is not a controller: a service-level limit,
 * decided before each call. The annotation's attributes are the same route parameters as on a
 * Spring MVC handler ({@link HandlerGuards#parameters}), with the application's
 * {@code sluice.*} settings (store, timeout, failure mode, metrics) and its policy registry.
 *
 * <p>A call has no request, so a method's limit is global: one budget for the method however many
 * callers share it ({@code key=global}, whether the annotation says so or leaves out {@code key});
 * another {@code key} ({@code header:...}, {@code principal}) stops start-up naming the method;
 * {@code sluice.exempt} and {@code methods} (client networks, HTTP methods) do not apply. A refused call throws
 * {@link RateLimitExceededException} with the decision (and its retry-after) and a bodiless 429
 * carrying {@code Retry-After}; with {@code failureMode = CLOSED}, a store that cannot decide
 * throws {@link ServiceUnavailableException}. {@code charge=after} and concurrency leases are
 * settled when the call returns (as a 200) or throws (as a 500).
 *
 * <p>Each method's limiter is built once, when its bean is created, so that a bad annotation
 * stops start-up. Thread-safe.
 */
final class MethodLimits implements MethodInterceptor {

    private static final Logger LOG = LoggerFactory.getLogger(MethodLimits.class);
    private static final String GLOBAL = "global";
    private static final String DEFAULT_KEY = "ip";
    /** What the limiter sees of a call: no header, parameter, user or address. */
    private static final RequestView CALL = new Call();

    private final Supplier<SluiceSettings> settings;
    private final Supplier<Object> meterRegistry;
    private final Supplier<ApplicationPolicies> policies;
    private final Map<Method, HttpLimiter> guards = new ConcurrentHashMap<>();

    MethodLimits(Supplier<SluiceSettings> settings, Supplier<Object> meterRegistry,
                 Supplier<ApplicationPolicies> policies) {
        this.settings = settings;
        this.meterRegistry = meterRegistry;
        this.policies = policies;
    }

    /** Whether {@code method} of {@code targetClass} is limited: it or the method it implements is annotated. */
    static boolean annotated(Method method, Class<?> targetClass) {
        return AopUtils.getMostSpecificMethod(method, targetClass).getAnnotationsByType(RateLimit.class).length > 0
                || method.getAnnotationsByType(RateLimit.class).length > 0;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Class<?> target = invocation.getThis() == null ? invocation.getMethod().getDeclaringClass()
                : AopUtils.getTargetClass(invocation.getThis());
        HttpLimiter guard = guard(target, invocation.getMethod());
        if (guard == null) {
            return invocation.proceed();
        }
        Verdict verdict = await(guard);
        Answer answer = verdict.answer();
        if (!answer.proceeds()) {
            RefusalResponse response = new RefusalResponse(answer);
            if (answer.status() == 503) {
                throw new ServiceUnavailableException(response);
            }
            throw new RateLimitExceededException(verdict.decision(), response, answer.body());
        }
        boolean returned = false;
        try {
            Object result = invocation.proceed();
            returned = true;
            return result;
        } finally {
            verdict.responseEnded(returned ? 200 : 500);
        }
    }

    /** The limiter of {@code method} on {@code target}, built on first use; {@code null}: not annotated. */
    HttpLimiter guard(Class<?> target, Method method) {
        Method specific = AopUtils.getMostSpecificMethod(method, target);
        HttpLimiter guard = guards.get(specific);
        if (guard == null && annotated(method, target)) {
            HttpLimiter built = build(target, specific.getAnnotationsByType(RateLimit.class).length > 0
                    ? specific : method);
            guard = guards.putIfAbsent(specific, built);
            if (guard == null) {
                guard = built;
            } else {
                built.close(); // leaves the registry: the limiter that decides is listed once
            }
        }
        return guard;
    }

    private HttpLimiter build(Class<?> target, Method method) {
        RateLimit[] annotations = method.getAnnotationsByType(RateLimit.class);
        String where = "@RateLimit on method '" + target.getName() + "." + method.getName() + "'";
        String base = target.getSimpleName() + "." + method.getName();
        String signature = PolicyNames.signature(target, method);
        SluiceSettings app = settings.get();
        HttpLimiter.Builder builder = HttpLimiter.builder(where);
        try {
            for (int i = 0; i < annotations.length; i++) {
                RateLimit a = annotations[i];
                String key = a.key().trim();
                // The annotation's default, ip, is no choice: a call has no address, the budget is global.
                if (!key.isEmpty() && !key.equalsIgnoreCase(GLOBAL) && !key.equalsIgnoreCase(DEFAULT_KEY)) {
                    throw new IllegalArgumentException("'key' of a method that is no request handler must be "
                            + "'global' (one budget for the method) or left out: a call has no request to key by, "
                            + "got '" + a.key() + "'");
                }
                String policy = a.policy().isBlank()
                        ? PolicyNames.forResourceMethod(base, signature, annotations.length == 1 ? "" : "-" + (i + 1))
                        : a.policy().trim();
                Map<String, String> route = new HashMap<>(HandlerGuards.parameters(a, policy));
                route.put("key", GLOBAL);
                route.put("methods", null); // HTTP methods: a call has none
                builder.route(route::get);
            }
            Function<String, String> lookup = app.applicationLookup();
            // Client networks are a request's; a call is no client's.
            Function<String, String> application = name -> name.equals("exempt") ? null : lookup.apply(name);
            // Every form of sluice.reject is fine: a refused call always throws.
            HttpLimiter guard = builder.parameters(application).rejections("a Spring bean's method",
                            Rejection.SEND_ERROR.configName(), Rejection.EXCEPTION.configName())
                    .meterRegistry(meterRegistry.get()).registry(policies.get()).build();
            LOG.debug("Rate-limiting {}.{}: {}", target.getName(), method.getName(), guard);
            return guard;
        } catch (SluiceConfigurationException e) {
            throw e;
        } catch (IllegalArgumentException e) {
            String message = e.getMessage();
            throw new IllegalArgumentException(message.startsWith(where) ? message : where + ": " + message, e);
        }
    }

    /** The verdict, waited for on the caller's thread (at most the limiter's timeout). */
    private static Verdict await(HttpLimiter limiter) {
        try {
            return limiter.check(CALL).toCompletableFuture().join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException failure ? failure : e;
        }
    }

    /** Unlists the limiters and releases their stores. */
    void close() {
        guards.values().forEach(HttpLimiter::close);
        guards.clear();
    }

    /** A method call as the limiter sees it: nothing of a request; attributes kept for the call's verdict only. */
    private static final class Call implements RequestView {
        @Override
        public String header(String name) {
            return null;
        }

        @Override
        public List<String> headers(String name) {
            return List.of();
        }

        @Override
        public String principal() {
            return null;
        }

        @Override
        public String param(String name) {
            return null;
        }

        @Override
        public String remoteAddr() {
            return "0.0.0.0";
        }

        @Override
        public Object attribute(String name) {
            return null;
        }

        @Override
        public void setAttribute(String name, Object value) {
            // A call has no attributes to carry the outcome to.
        }
    }
}
