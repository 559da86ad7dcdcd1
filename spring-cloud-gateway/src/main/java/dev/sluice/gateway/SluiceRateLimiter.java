package dev.sluice.gateway;

import dev.sluice.spi.RateLimitStore;
import org.springframework.cloud.gateway.event.FilterArgsEvent;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import reactor.core.publisher.Mono;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Spring Cloud Gateway's {@code RateLimiter} decided by Sluice: a route's {@code RequestRateLimiter}
 * filter, with its own {@code KeyResolver}, switches to Sluice by naming this bean
 * ({@code rate-limiter: "#{@sluiceRateLimiter}"}). The caller is the key the route's
 * {@code KeyResolver} resolved; each route counts under its own policy (the route id), so two
 * routes never share a budget unless they name the same {@code policy}.
 *
 * <p>A route's limits come from its filter arguments under {@value #CONFIGURATION_PROPERTY_NAME}
 * ({@code sluice-rate-limiter.limit: 10/1s,1000/1h}), each unset argument from the defaults this
 * limiter was built with (the {@code sluice.gateway.*} properties of the auto-configuration); see
 * {@link Config}. The limits of a route are decided together, atomically: nothing is spent unless
 * every limit allows.
 *
 * <p>Per request: one asynchronous decision of the store ({@link dev.sluice.RateLimiter#decideAsync}),
 * which never blocks a thread and completes within the route's {@code timeout}. Admitted: the
 * rate-limit headers of the route's {@code headers} style. Refused: {@code Retry-After} (whole
 * seconds, at least 1) and the headers with remaining 0; the filter answers with its
 * {@code status-code} (429 by default). When the store fails or is late, {@code failure-mode=open}
 * admits without rate-limit headers, {@code closed} refuses with {@code Retry-After} (the filter's
 * status code again: the gateway's contract has no other), {@code local} decides on this
 * instance's share.
 *
 * <p>Bad configuration fails when the route is bound, naming the route, the argument and the value.
 * The store is the owner's: this limiter never closes it. Thread-safe.
 */
public final class SluiceRateLimiter extends AbstractRateLimiter<SluiceRateLimiter.Config> {

    /** The prefix of a route's arguments for this limiter: {@code sluice-rate-limiter.limit}. */
    public static final String CONFIGURATION_PROPERTY_NAME = "sluice-rate-limiter";

    private final RateLimitStore store;
    private final Config defaults;
    /** The compiled limits of each route, by route id: bound from its arguments, or the defaults. */
    private final Map<String, RouteLimits> routes = new ConcurrentHashMap<>();

    /**
     * A limiter deciding on {@code store}, each route's unset arguments taken from {@code defaults}.
     *
     * @param store                the store every route decides on; not closed by this limiter
     * @param defaults             the arguments of a route that sets none; copied, and checked now
     *                             (a {@code limit} in it must be valid)
     * @param configurationService the gateway's binder of route arguments
     * @throws IllegalArgumentException naming the {@code sluice.gateway.*} property and its value
     */
    public SluiceRateLimiter(RateLimitStore store, Config defaults, ConfigurationService configurationService) {
        super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
        this.store = Objects.requireNonNull(store, "store");
        this.defaults = Objects.requireNonNull(defaults, "defaults").copy();
        if (this.defaults.getLimit() != null) {
            RouteLimits.of(null, new Config(), this.defaults, store);
        }
    }

    /**
     * Binds a route's {@value #CONFIGURATION_PROPERTY_NAME} arguments, as every gateway rate
     * limiter does, and compiles them at once, so that a bad value fails the route's start.
     */
    @Override
    public void onApplicationEvent(FilterArgsEvent event) {
        super.onApplicationEvent(event);
        Config bound = getConfig().get(event.getRouteId());
        if (bound != null) {
            routes.put(event.getRouteId(), RouteLimits.of(event.getRouteId(), bound, defaults, store));
        }
    }

    /**
     * Decides one request of caller {@code id} on route {@code routeId}, without blocking.
     *
     * @return admitted or refused, with the headers to add; an error only if the route has no
     *         {@code limit} anywhere (neither argument nor default)
     */
    @Override
    public Mono<Response> isAllowed(String routeId, String id) {
        RouteLimits limits;
        try {
            limits = routes.computeIfAbsent(routeId, route -> RouteLimits.of(route,
                    getConfig().getOrDefault(route, new Config()), defaults, store));
        } catch (IllegalArgumentException e) {
            return Mono.error(e);
        }
        return Mono.fromCompletionStage(limits.limiter().decideAsync(id)).map(limits::response);
    }

    /** The route's policies and limits, for logs. */
    @Override
    public String toString() {
        return "SluiceRateLimiter" + routes.values();
    }

    /**
     * The arguments of one route ({@code sluice-rate-limiter.<name>}) or the defaults of every
     * route ({@code sluice.gateway.<name>}), as text in Sluice's configuration vocabulary; a value
     * left {@code null} is taken from the defaults. Mutable, as the gateway's binder needs; read
     * once, when the route is bound.
     *
     * <ul>
     *   <li>{@code limit}: one or more {@code <count>/<period>}, comma-separated ({@code 10/1s,1000/1h});
     *       required on the route or in the defaults</li>
     *   <li>{@code algorithm}: {@code token-bucket} (default), {@code gcra}, {@code sliding-window},
     *       {@code fixed-window}, {@code sliding-log}</li>
     *   <li>{@code burst}: the capacity of each bucket, comma-separated in the order of
     *       {@code limit} (missing ones are the limit's count)</li>
     *   <li>{@code cost}: units one request spends of every limit; default 1</li>
     *   <li>{@code policy}: the name the route counts under; default the route id (hashed if it is
     *       not 1 to 64 of {@code A-Z a-z 0-9 . _ ~ -}); with several limits each one counts under
     *       {@code <policy>-<period>}, such as {@code api-1s}</li>
     *   <li>{@code failure-mode}: {@code open} (default), {@code closed} or {@code local}</li>
     *   <li>{@code timeout}: the longest a decision waits on the store, such as {@code 50ms};
     *       default {@code 100ms}</li>
     *   <li>{@code headers}: {@code legacy} (default), {@code draft-10} (alias {@code draft}),
     *       {@code both} or {@code none}</li>
     * </ul>
     */
    public static class Config {

        private String limit;
        private String algorithm;
        private String burst;
        private String cost;
        private String policy;
        private String failureMode;
        private String timeout;
        private String headers;

        /** A configuration with every value unset. */
        public Config() {
        }

        Config copy() {
            Config copy = new Config();
            copy.limit = limit;
            copy.algorithm = algorithm;
            copy.burst = burst;
            copy.cost = cost;
            copy.policy = policy;
            copy.failureMode = failureMode;
            copy.timeout = timeout;
            copy.headers = headers;
            return copy;
        }

        /** The {@code limit}, or {@code null}. */
        public String getLimit() {
            return limit;
        }

        /** Sets the {@code limit}, such as {@code 10/1s,1000/1h}. */
        public Config setLimit(String limit) {
            this.limit = limit;
            return this;
        }

        /** The {@code algorithm}, or {@code null}. */
        public String getAlgorithm() {
            return algorithm;
        }

        /** Sets the {@code algorithm}, such as {@code sliding-window}. */
        public Config setAlgorithm(String algorithm) {
            this.algorithm = algorithm;
            return this;
        }

        /** The {@code burst}, or {@code null}. */
        public String getBurst() {
            return burst;
        }

        /** Sets the {@code burst} of each limit, in the order of {@code limit}, such as {@code 20}. */
        public Config setBurst(String burst) {
            this.burst = burst;
            return this;
        }

        /** The {@code cost}, or {@code null}. */
        public String getCost() {
            return cost;
        }

        /** Sets the {@code cost}, units one request spends. */
        public Config setCost(String cost) {
            this.cost = cost;
            return this;
        }

        /** The {@code policy}, or {@code null}. */
        public String getPolicy() {
            return policy;
        }

        /** Sets the {@code policy}, the name the route counts under. */
        public Config setPolicy(String policy) {
            this.policy = policy;
            return this;
        }

        /** The {@code failure-mode}, or {@code null}. */
        public String getFailureMode() {
            return failureMode;
        }

        /** Sets the {@code failure-mode}: {@code open}, {@code closed} or {@code local}. */
        public Config setFailureMode(String failureMode) {
            this.failureMode = failureMode;
            return this;
        }

        /** The {@code timeout}, or {@code null}. */
        public String getTimeout() {
            return timeout;
        }

        /** Sets the {@code timeout}, such as {@code 50ms}. */
        public Config setTimeout(String timeout) {
            this.timeout = timeout;
            return this;
        }

        /** The {@code headers}, or {@code null}. */
        public String getHeaders() {
            return headers;
        }

        /** Sets the {@code headers} style: {@code legacy}, {@code draft-10}, {@code both} or {@code none}. */
        public Config setHeaders(String headers) {
            this.headers = headers;
            return this;
        }

        /** The values that are set, in the vocabulary's names. */
        @Override
        public String toString() {
            StringBuilder text = new StringBuilder("{");
            append(text, "limit", limit);
            append(text, "algorithm", algorithm);
            append(text, "burst", burst);
            append(text, "cost", cost);
            append(text, "policy", policy);
            append(text, "failure-mode", failureMode);
            append(text, "timeout", timeout);
            append(text, "headers", headers);
            return text.append('}').toString();
        }

        private static void append(StringBuilder text, String name, String value) {
            if (value != null) {
                text.append(text.length() > 1 ? ", " : "").append(name).append('=').append(value);
            }
        }
    }
}
