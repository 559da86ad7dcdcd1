package dev.sluice.grpc;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.HttpLimiter;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.Verdict;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A grpc-java {@link ServerInterceptor} that rate-limits calls per method or per service, with
 * Sluice's configuration vocabulary ({@code limit}, {@code burst}, {@code algorithm}, {@code key},
 * {@code failure-mode}, {@code timeout}, {@code store}, ...; see {@code docs/grpc.md}).
 *
 * <pre>{@code
 * RateLimitInterceptor limits = RateLimitInterceptor.builder()
 *         .settings(Map.of("store", "redis://redis:6379", "timeout", "50ms"))
 *         .method("shop.Orders/Create", Map.of("limit", "10/s", "key", "header:x-api-key,ip"))
 *         .method("shop.Orders/*", Map.of("limit", "100/1m", "key", "principal,ip"))
 *         .method("shop.Reports/Follow", Map.of("algorithm", "concurrency", "limit", "2", "lease", "10m"))
 *         .principal(Authentication.USER)
 *         .build();
 * Server server = NettyServerBuilder.forPort(8443).addService(orders).intercept(limits).build();
 * }</pre>
 *
 * <p>A call's policy is the most specific pattern naming it: its full method name, else its
 * service's {@code pkg.Service/*}, else {@code *}; a call none names proceeds untouched. Each call
 * is charged once, when it starts, whatever number of messages it streams; a concurrency limit
 * holds its lease until the call completes or is cancelled. Keys: {@code header:NAME} reads the
 * request metadata, {@code ip} the peer's address (or, from a peer in {@code trusted-proxies}, its
 * {@code x-forwarded-for} metadata), {@code principal} the value of the {@link Context.Key} given
 * to {@link Builder#principal} (a {@link java.security.Principal}'s name, else its text).
 *
 * <p>A refused call is closed with {@code RESOURCE_EXHAUSTED}, a {@code google.rpc.Status} with a
 * {@code google.rpc.RetryInfo} in {@code grpc-status-details-bin}, and the budget in the trailers
 * ({@code ratelimit-limit}, {@code ratelimit-remaining}, {@code ratelimit-reset},
 * {@code retry-after}); a call let through carries the budget in its response headers. When the
 * store fails, {@code failure-mode=open} lets the call through and {@code closed} closes it with
 * {@code UNAVAILABLE}. The decision never blocks a transport thread: while the store decides, the
 * call's events wait in a listener of the interceptor's, and the call starts (or is closed) on the
 * thread that completes the decision, never the store's I/O thread.
 *
 * <p>Bad configuration fails in {@link Builder#build} with an {@link IllegalArgumentException}
 * naming the method pattern, the parameter and its value. Immutable and thread-safe;
 * {@link #close} releases the stores the interceptor acquired.
 */
public final class RateLimitInterceptor implements ServerInterceptor, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RateLimitInterceptor.class);

    /** Policies by full method name ({@code pkg.Service/Method}). */
    private final Map<String, HttpLimiter> methods;
    /** Policies by full service name. */
    private final Map<String, HttpLimiter> services;
    /** The policy of every other call, or {@code null}. */
    private final HttpLimiter everyCall;
    private final Context.Key<?> principal;
    private final List<HttpLimiter> all;
    /** Where a call's end returns its lease (or decides a refund): that may wait on the store. */
    private final Executor ends;
    /** {@link #ends} when the interceptor made it, to shut down on close; else {@code null}. */
    private final ExecutorService ownEnds;

    private RateLimitInterceptor(Map<MethodPattern, HttpLimiter> limiters, Context.Key<?> principal,
                                 Executor executor) {
        Map<String, HttpLimiter> byMethod = new HashMap<>();
        Map<String, HttpLimiter> byService = new HashMap<>();
        HttpLimiter every = null;
        for (Map.Entry<MethodPattern, HttpLimiter> e : limiters.entrySet()) {
            MethodPattern pattern = e.getKey();
            if (pattern.service() == null) {
                every = e.getValue();
            } else if (pattern.method() == null) {
                byService.put(pattern.service(), e.getValue());
            } else {
                byMethod.put(pattern.toString(), e.getValue());
            }
        }
        this.methods = Map.copyOf(byMethod);
        this.services = Map.copyOf(byService);
        this.everyCall = every;
        this.principal = principal;
        this.all = List.copyOf(limiters.values());
        this.ownEnds = executor == null ? endsExecutor() : null;
        this.ends = executor == null ? ownEnds : executor;
    }

    /** Daemon threads made as ends need them, each ending after two idle seconds. */
    private static ExecutorService endsExecutor() {
        AtomicInteger count = new AtomicInteger();
        return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 2, TimeUnit.SECONDS, new SynchronousQueue<>(), task -> {
            Thread thread = new Thread(task, "sluice-grpc-ends-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    /** A builder of an interceptor. */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        HttpLimiter limiter = limiterOf(call.getMethodDescriptor().getFullMethodName());
        if (limiter == null) {
            return next.startCall(call, headers);
        }
        CallView view = new CallView(call, headers, principal);
        CompletableFuture<Verdict> decided = limiter.check(view).toCompletableFuture();
        if (decided.isDone()) {
            // An immediate store (memory) decided on this thread: no event can have arrived yet.
            Verdict verdict;
            try {
                verdict = decided.join();
            } catch (CompletionException e) {
                return failed(call, e);
            }
            return start(call, headers, next, view, verdict, true, ends);
        }
        DelayedListener<ReqT> delayed = new DelayedListener<>(Context.current());
        decided.whenComplete((verdict, error) -> delayed.start(() -> error != null ? failed(call, error)
                : start(call, headers, next, view, verdict, false, ends), e -> failed(call, e)));
        return delayed;
    }

    /**
     * Releases the stores the interceptor acquired (closing those no other limiter uses); call it
     * once the server has shut down.
     */
    @Override
    public void close() {
        if (ownEnds != null) {
            ownEnds.shutdown();
        }
        all.forEach(HttpLimiter::close);
    }

    /** The policies by pattern, for logs. */
    @Override
    public String toString() {
        List<String> out = new ArrayList<>();
        methods.forEach((name, limiter) -> out.add(name + ": " + limiter));
        services.forEach((name, limiter) -> out.add(name + "/*: " + limiter));
        if (everyCall != null) {
            out.add("*: " + everyCall);
        }
        return "RateLimitInterceptor" + out;
    }

    private HttpLimiter limiterOf(String fullMethodName) {
        HttpLimiter exact = methods.get(fullMethodName);
        if (exact != null) {
            return exact;
        }
        int slash = fullMethodName.lastIndexOf('/');
        HttpLimiter service = slash < 0 ? null : services.get(fullMethodName.substring(0, slash));
        return service != null ? service : everyCall;
    }

    private static <ReqT, RespT> ServerCall.Listener<ReqT> start(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                ServerCallHandler<ReqT, RespT> next, CallView view,
                                                                Verdict verdict, boolean inline, Executor ends) {
        if (!verdict.proceeds()) {
            Refusals.refuse(call, verdict, view);
            return new ServerCall.Listener<>() { };
        }
        if (verdict.answer().headers().isEmpty() && !verdict.awaitsEnd()) {
            return next.startCall(call, headers);
        }
        LimitedCall<ReqT, RespT> limited = new LimitedCall<>(call, Refusals.metadata(verdict.answer().headers()),
                verdict, ends);
        try {
            return limited.ending(next.startCall(limited, headers));
        } catch (RuntimeException | Error e) {
            limited.ended(500); // no listener will see this call end: return its lease now
            if (inline) {
                throw e; // grpc-java closes the call, as for any interceptor that throws
            }
            return failed(call, e);
        }
    }

    /** Closes a call whose own code failed (a key resolver, the application's start). */
    private static <ReqT> ServerCall.Listener<ReqT> failed(ServerCall<ReqT, ?> call, Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        LOG.warn("Sluice: call {} failed before it started", call.getMethodDescriptor().getFullMethodName(), cause);
        try {
            call.close(Status.UNKNOWN.withDescription("Application error processing RPC").withCause(cause),
                    new Metadata());
        } catch (IllegalStateException alreadyClosed) {
            // closed meanwhile (cancelled): nothing left to answer
        }
        return new ServerCall.Listener<>() { };
    }

    /**
     * Builds a {@link RateLimitInterceptor}: the application's settings, a policy per method
     * pattern, and the optional hooks. Not thread-safe; each call returns this builder.
     */
    public static final class Builder {
        private final Map<String, String> settings = new LinkedHashMap<>();
        private final Map<MethodPattern, List<Map<String, String>>> policies = new LinkedHashMap<>();
        private Context.Key<?> principal;
        private KeyResolver keyResolver;
        private RateLimitStore store;
        private Executor executor;

        private Builder() {
        }

        /**
         * The settings every policy shares, and defaults for their own parameters: {@code store},
         * {@code timeout}, {@code headers}, {@code trusted-proxies}, {@code forwarded-header},
         * {@code ipv6-prefix}, {@code failure-mode}, {@code mode}, {@code metrics}, ...
         *
         * @throws IllegalArgumentException naming a parameter that is not in the vocabulary
         */
        public Builder settings(Map<String, String> parameters) {
            parameters.forEach((name, value) -> {
                requireParameter("settings", name);
                settings.put(name, value);
            });
            return this;
        }

        /**
         * Limits the calls of {@code pattern}, {@code pkg.Service/Method}, {@code pkg.Service/*}
         * (or {@code pkg.Service}) or {@code *}, by {@code parameters} ({@code limit},
         * {@code burst}, {@code algorithm}, {@code key}, {@code cost}, {@code policy},
         * {@code failure-mode}, {@code lease}, ...), which override the {@link #settings}. A pattern
         * given several times has several limits, decided together, all or nothing, as an
         * annotation's repeated limits are; each then needs a {@code policy} of its own.
         *
         * @throws IllegalArgumentException naming the pattern, or a parameter not in the vocabulary
         */
        public Builder method(String pattern, Map<String, String> parameters) {
            MethodPattern parsed = MethodPattern.parse(pattern);
            parameters.keySet().forEach(name -> requireParameter("gRPC method '" + parsed + "'", name));
            policies.computeIfAbsent(parsed, k -> new ArrayList<>()).add(Map.copyOf(parameters));
            return this;
        }

        /**
         * The {@link Context.Key} under which the application's authentication (an interceptor
         * that runs before this one) puts the caller, for {@code key=principal}.
         */
        public Builder principal(Context.Key<?> key) {
            this.principal = Objects.requireNonNull(key, "key");
            return this;
        }

        /** Asks {@code resolver} for each call's caller first; where it names none, {@code key} decides. */
        public Builder keyResolver(KeyResolver resolver) {
            this.keyResolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /**
         * Decides on {@code rateLimitStore}, which the application owns and closes, instead of
         * the store the {@code store} setting names (which then only names it).
         */
        public Builder store(RateLimitStore rateLimitStore) {
            this.store = Objects.requireNonNull(rateLimitStore, "rateLimitStore");
            return this;
        }

        /**
         * Where a call's end returns its concurrency lease (or decides a {@code charge=after}
         * refund), which waits at most the {@code timeout} on the store. Default: daemon threads of
         * the interceptor's, {@code sluice-grpc-ends-N}, made as needed and ending after two idle
         * seconds.
         */
        public Builder executor(Executor endsExecutor) {
            this.executor = Objects.requireNonNull(endsExecutor, "endsExecutor");
            return this;
        }

        /**
         * The interceptor, holding the stores its policies name until {@link RateLimitInterceptor#close}.
         *
         * @throws IllegalArgumentException naming the pattern, the first bad parameter and its value
         */
        public RateLimitInterceptor build() {
            if (policies.isEmpty()) {
                throw new IllegalArgumentException("a RateLimitInterceptor needs at least one method(pattern, limits)");
            }
            Map<MethodPattern, HttpLimiter> built = new LinkedHashMap<>();
            try {
                for (Map.Entry<MethodPattern, List<Map<String, String>>> e : policies.entrySet()) {
                    built.put(e.getKey(), limiter(e.getKey(), e.getValue()));
                }
            } catch (RuntimeException e) {
                built.values().forEach(HttpLimiter::close);
                throw e;
            }
            return new RateLimitInterceptor(built, principal, executor);
        }

        private HttpLimiter limiter(MethodPattern pattern, List<Map<String, String>> limits) {
            String where = "gRPC method '" + pattern + "'";
            HttpLimiter.Builder builder = HttpLimiter.builder(where).name(pattern.policyName());
            if (limits.size() == 1) {
                Map<String, String> merged = new HashMap<>(settings);
                merged.putAll(limits.get(0));
                builder.parameters(merged::get);
            } else {
                Map<String, String> shared = Map.copyOf(settings);
                builder.parameters(shared::get);
                for (Map<String, String> limit : limits) {
                    Map<String, String> merged = new HashMap<>(settings);
                    merged.putAll(limit);
                    try {
                        builder.route(merged::get);
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
                    }
                }
            }
            if (keyResolver != null) {
                builder.keyResolver(keyResolver);
            }
            if (store != null) {
                builder.store(store);
            }
            try {
                return builder.build();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
            }
        }

        private static void requireParameter(String where, String name) {
            try {
                HttpLimiter.requireParameter(name);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
            }
        }
    }
}
