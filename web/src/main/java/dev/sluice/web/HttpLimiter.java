package dev.sluice.web;

import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.internal.AfterResponse;
import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.web.internal.Guard;
import dev.sluice.web.internal.HttpAnswer;
import dev.sluice.web.internal.KeySource;
import dev.sluice.web.internal.Parameter;
import dev.sluice.web.internal.PolicyNames;
import dev.sluice.web.internal.Rejection;
import dev.sluice.web.internal.RouteSpec;
import dev.sluice.web.internal.StoreRegistry;
import dev.sluice.web.internal.WebSettings;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * The rate limits of one route (a servlet filter, a resource method), built once at start-up from
 * Sluice's configuration vocabulary (see {@code docs/configuration.md}), and the one thing an
 * adapter asks per request: {@link #check}, which answers without blocking a thread.
 *
 * <pre>{@code
 * HttpLimiter limiter = HttpLimiter.builder("filter 'search'")
 *         .parameters(Map.of("limit", "100/1m", "key", "header:X-API-Key,ip")::get)
 *         .build();
 * limiter.check(view).thenAccept(verdict -> render(verdict.answer()));
 * }</pre>
 *
 * <p>Per request the caller is resolved, the store decides once (waiting at most the
 * {@code timeout}), and the {@link Verdict} says what to render: proceed with the rate-limit
 * headers; {@code 429} with {@code Retry-After} and a problem body; when the store fails, proceed
 * without headers ({@code failure-mode=open}) or {@code 503} ({@code closed}). Blocking, if the
 * adapter must, is its own choice ({@code check(view).toCompletableFuture().join()}). A request
 * of a method not limited ({@code methods}), of an {@code exempt} client or of an unlimited tier
 * proceeds untouched.
 *
 * <p>Built from parameters, a limiter uses the application's store of its {@code store} value,
 * shared by every limiter naming the same value, and {@link #close} releases it; built around a
 * {@link RateLimiter}, it never closes that limiter's store. Bad configuration fails in
 * {@link Builder#build} with an {@link IllegalArgumentException} whose message starts with the
 * quoted parameter, such as {@code 'limit' must look like <count>/<period> (e.g. 100/1m), got
 * '100/minutes'}, for the adapter to say where the value came from.
 *
 * <p>Immutable and thread-safe.
 */
public final class HttpLimiter implements AutoCloseable {

    private final Guard guard;
    private final String reject;
    private final RateLimitStore store;
    /** The {@code store} value, shown in the registry, or {@code null}: a limiter given in Java. */
    private final String storeValue;
    /** Whether {@link #storeValue} was acquired from the application's stores, to release on close. */
    private final boolean acquired;
    private final ApplicationPolicies policies;
    private final String description;

    private HttpLimiter(Guard guard, String reject, RateLimitStore store, String storeValue, boolean acquired,
                        ApplicationPolicies policies, String description) {
        this.guard = guard;
        this.reject = reject;
        this.store = store;
        this.storeValue = storeValue;
        this.acquired = acquired;
        this.policies = policies;
        this.description = description;
    }

    /**
     * A builder of the limits of the route {@code where}, named so in messages and logs, such as
     * {@code filter 'search'}.
     */
    public static Builder builder(String where) {
        return new Builder(Objects.requireNonNull(where, "where"));
    }

    /**
     * Checks that {@code name} is one of the vocabulary's parameters.
     *
     * @throws IllegalArgumentException naming {@code name} and every known parameter
     */
    public static void requireParameter(String name) {
        Parameter.named(name);
    }

    /**
     * Decides one request without blocking: the stage completes within the limiter's timeout, on
     * the store's executor if it waited, and fails only if the request's own code failed (a
     * {@link KeyResolver}, the view). The request attributes of {@link RequestAttributes} are set
     * on {@code request} before it completes.
     */
    public CompletionStage<Verdict> check(RequestView request) {
        return guard.checkAsync(request).thenApply(HttpLimiter::verdict);
    }

    /**
     * The form of refusal the route asks for, its {@code reject} parameter: {@code problem} (the
     * default: render the {@link Answer}), or another form the adapter declared in
     * {@link Builder#rejections}.
     */
    public String reject() {
        return reject;
    }

    /**
     * Whether the route's rate limiter has stopped waiting on its store after repeated failures
     * (its circuit breaker is open), for health checks; {@code false} with only a concurrency limit.
     */
    public boolean storeCircuitOpen() {
        RateLimiter limiter = guard.limiter();
        return limiter != null && limiter.storeCircuitOpen();
    }

    /** Leaves the policy registry and releases the application's store, closing it if no other limiter uses it. */
    @Override
    public void close() {
        if (policies != null) {
            policies.unregister(guard);
        }
        if (acquired) {
            StoreRegistry.application().release(storeValue);
        }
    }

    /** The route's limits, key and HTTP settings, a password in the store shown as {@code ***}. */
    @Override
    public String toString() {
        return description;
    }

    private static Verdict verdict(HttpAnswer answer) {
        List<Answer.Header> headers = new ArrayList<>(answer.headers().size());
        for (HttpAnswer.Header header : answer.headers()) {
            headers.add(new Answer.Header(header.name(), header.value()));
        }
        AfterResponse end = answer.afterResponse();
        return new Verdict(answer.proceeds() ? new Answer(Answer.PROCEED, headers, null, null)
                : new Answer(answer.status(), headers, answer.body(), Answer.PROBLEM_JSON),
                answer.decision(), end == AfterResponse.NONE ? null : end::complete);
    }

    /**
     * Builds an {@link HttpLimiter} from parameters, or around a {@link RateLimiter}, with the
     * application's optional hooks. Not thread-safe; each call returns this builder.
     */
    public static final class Builder {
        private final String where;
        private Function<String, String> parameters = name -> null;
        private String name;
        private RateLimiter limiter;
        private KeyResolver keyResolver;
        private LimitResolver limitResolver;
        private Object meterRegistry;
        private ApplicationPolicies policies;
        private String adapter = "this adapter";
        private Rejection[] rejections = {Rejection.PROBLEM};
        private final List<RouteSpec> routes = new ArrayList<>();
        private RateLimitStore store;
        private HttpLimiter warningsWith;

        private Builder(String where) {
            this.where = where;
        }

        /**
         * The route's parameters by name, {@code null} or blank when absent, as a filter's
         * init-params give them: the route's own ({@code limit}, {@code key}, ...) and the
         * application's ({@code store}, {@code timeout}, {@code headers}, ...).
         */
        public Builder parameters(Function<String, String> lookup) {
            this.parameters = Objects.requireNonNull(lookup, "lookup");
            return this;
        }

        /**
         * The route's name, such as the filter's: the default {@code policy}, with characters
         * outside {@code A-Z a-z 0-9 . _ ~ -} replaced by {@code -}; default {@code sluice}.
         */
        public Builder name(String routeName) {
            this.name = routeName;
            return this;
        }

        /**
         * Decides with {@code rateLimiter}, built in Java: its limits, store, failure mode, timeout and
         * shadow mode apply, and of the parameters only {@code key}, {@code headers},
         * {@code partition-key}, {@code trusted-proxies}, {@code forwarded-header} and
         * {@code ipv6-prefix}.
         */
        public Builder limiter(RateLimiter rateLimiter) {
            this.limiter = Objects.requireNonNull(rateLimiter, "rateLimiter");
            return this;
        }

        /** Asks {@code resolver} for each request's caller first; where it names none, {@code key} decides. */
        public Builder keyResolver(KeyResolver resolver) {
            this.keyResolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /** Chooses each request's limits with {@code resolver}; the route's own limits apply when it returns null. */
        public Builder limitResolver(LimitResolver resolver) {
            this.limitResolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /**
         * The application's Micrometer {@code MeterRegistry} for {@code metrics=true}; default
         * ({@code null}): Micrometer's global registry.
         */
        public Builder meterRegistry(Object registry) {
            this.meterRegistry = registry;
            return this;
        }

        /**
         * Lists the route in the application's {@code registry} (for the console and overrides),
         * from {@link #build} until {@link HttpLimiter#close}.
         *
         * @throws IllegalArgumentException if Sluice did not make {@code registry}
         */
        public Builder registry(PolicyRegistry registry) {
            if (!(registry instanceof ApplicationPolicies own)) {
                throw new IllegalArgumentException("'registry' must be Sluice's own PolicyRegistry, got " + registry);
            }
            this.policies = own;
            return this;
        }

        /**
         * The forms of {@code reject} this adapter renders besides {@code problem}, such as
         * {@code send-error} or {@code exception}.
         *
         * @param adapter the adapter, for messages, such as {@code a servlet filter}
         * @throws IllegalArgumentException naming a form that is not a value of {@code reject}
         */
        public Builder rejections(String adapter, String... forms) {
            this.adapter = Objects.requireNonNull(adapter, "adapter");
            List<Rejection> out = new ArrayList<>(List.of(Rejection.PROBLEM));
            for (String form : forms) {
                Rejection known = Rejection.parse(name -> form, adapter, Rejection.values());
                if (!out.contains(known)) {
                    out.add(known);
                }
            }
            this.rejections = out.toArray(new Rejection[0]);
            return this;
        }

        /**
         * Adds a limit of the route from its own parameters by name ({@code policy}, {@code limit},
         * {@code algorithm}, {@code burst}, {@code cost}, {@code key}, {@code failure-mode},
         * {@code tier-limits}, {@code methods}, {@code charge}, {@code charge-when}, {@code lease};
         * {@code null} or blank when absent), such as one of an annotation's repeated limits. The
         * limits added so are decided together, all or nothing, in place of the one the
         * {@link #parameters} name, which then give only the application's settings. Parsed now,
         * so that an adapter can tell a limit's error from a setting's.
         *
         * @param routeParameters the limit's parameters; {@code policy} defaults as for {@link #name}
         * @throws IllegalArgumentException naming the first bad parameter and its value
         */
        public Builder route(Function<String, String> routeParameters) {
            routes.add(RouteSpec.parse(Objects.requireNonNull(routeParameters, "routeParameters"),
                    PolicyNames.forFilter(name)));
            return this;
        }

        /**
         * Decides on {@code rateLimitStore}, acquired by the adapter, instead of acquiring the
         * application's store of the {@code store} parameter, which then only names it (in the
         * registry); the limiter never closes it.
         */
        public Builder store(RateLimitStore rateLimitStore) {
            this.store = Objects.requireNonNull(rateLimitStore, "rateLimitStore");
            return this;
        }

        /**
         * Logs the once-only warnings about requests (a forwarding header from a peer not in
         * {@code trusted-proxies}) at most once together with {@code other}'s, as the routes of one
         * adapter (one per annotated method) should.
         */
        public Builder sharingWarningsWith(HttpLimiter other) {
            this.warningsWith = Objects.requireNonNull(other, "other");
            return this;
        }

        /**
         * The limiter; built from parameters, it holds the application's store of its
         * {@code store} value until {@link HttpLimiter#close}.
         *
         * @throws IllegalArgumentException naming the first bad parameter and its value
         */
        public HttpLimiter build() {
            HttpLimiter built = limiter != null ? around() : configured();
            if (policies != null) {
                policies.register(built.guard, built.store, built.storeValue);
            }
            return built;
        }

        private HttpLimiter around() {
            Function<String, String> p = parameters;
            String key = present(p.apply(Parameter.KEY.configName()));
            List<KeySource> sources = key == null ? KeySource.IP : KeySource.parseList(key);
            WebSettings web = WebSettings.DEFAULTS;
            String value;
            if ((value = present(p.apply(Parameter.HEADERS.configName()))) != null) {
                web = web.withHeaders(HeaderStyle.parse(value));
            }
            if ((value = present(p.apply(Parameter.PARTITION_KEY.configName()))) != null) {
                web = web.withPartitionKey(Boolean.parseBoolean(value));
            }
            if ((value = present(p.apply(Parameter.TRUSTED_PROXIES.configName()))) != null) {
                web = web.withTrustedProxies(value);
            }
            if ((value = present(p.apply(Parameter.FORWARDED_HEADER.configName()))) != null) {
                web = web.withForwardedHeader(value);
            }
            if ((value = present(p.apply(Parameter.IPV6_PREFIX.configName()))) != null) {
                web = web.withIpv6Prefix(Integer.parseInt(value));
            }
            Guard guard = hooks(new Guard(limiter, sources, web, where));
            return new HttpLimiter(guard, Rejection.PROBLEM.configName(), limiter.store(), null, false, policies,
                    guard + ", key " + sources);
        }

        private HttpLimiter configured() {
            List<RouteSpec> given = routes.isEmpty() ? List.of(RouteSpec.parse(parameters, PolicyNames.forFilter(name)))
                    : List.copyOf(routes);
            WebSettings web = WebSettings.parse(parameters);
            Rejection reject = Rejection.parse(parameters, adapter, rejections);
            if (this.store != null) {
                return configured(given, web, reject, this.store, false);
            }
            RateLimitStore acquired;
            try {
                acquired = StoreRegistry.application().acquire(web.store());
            } catch (IllegalArgumentException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("'store' cannot be used (" + e + "), got '"
                        + WebSettings.shown(web.store()) + "'", e);
            }
            try {
                return configured(given, web, reject, acquired, true);
            } catch (IllegalArgumentException e) {
                StoreRegistry.application().release(web.store());
                throw e;
            }
        }

        private HttpLimiter configured(List<RouteSpec> given, WebSettings web, Rejection reject, RateLimitStore on,
                                       boolean acquired) {
            Guard guard = hooks(Guard.of(given, web, on, where, meterRegistry));
            return new HttpLimiter(guard, reject.configName(), on, web.store(), acquired, policies, guard + ", key "
                    + given.get(0).key() + ", store " + WebSettings.shown(web.store()) + ", headers "
                    + web.headers().configName() + ", trusted proxies " + web.callers().trustedProxies() + " ("
                    + web.callers().forwardedHeader().configName() + "), ipv6 prefix /" + web.callers().ipv6Prefix());
        }

        private Guard hooks(Guard guard) {
            Guard out = warningsWith == null ? guard : guard.sharingWarningsWith(warningsWith.guard);
            out = limitResolver == null ? out : out.withLimitResolver(limitResolver);
            return keyResolver == null ? out : out.withKeyResolver(keyResolver);
        }

        private static String present(String value) {
            return value == null || value.isBlank() ? null : value;
        }
    }
}
