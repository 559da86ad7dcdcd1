package dev.sluice.spring.boot;

import dev.sluice.jaxrs.RateLimit;
import dev.sluice.web.HttpLimiter;
import dev.sluice.webflux.RateLimitWebFilter;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@link RateLimit @RateLimit} on WebFlux handler methods: the handler of a request is found as
 * WebFlux's dispatcher finds it ({@link RequestMappingHandlerMapping#getHandler}, a {@code Mono}),
 * its limiter is the one {@link HandlerGuards} built for its method (at start-up), and the request
 * is decided and answered exactly as a {@link RateLimitWebFilter} decides it. Ordered with those
 * filters, right after Spring Security's, so that {@code principal} keys see the signed-in user.
 *
 * <p>Never blocks an event loop: a handler method whose limiter was not built at start-up (one
 * mapped later) has it built on a worker thread. Each handler's limit is decided once per request;
 * a request no handler method answers (static resources, functional routes, an unknown path, a
 * CORS pre-flight) goes on untouched, as does one whose handler could not be resolved here: the
 * dispatcher then answers it as it would anyway.
 */
final class RateLimitHandlerFilter implements WebFilter, Ordered, StoreCircuits {

    /** The exchange attribute holding the limiters that decided the request. */
    private static final String DECIDED = RateLimitHandlerFilter.class.getName() + ".decided";

    private final HandlerGuards guards;
    private final ObjectProvider<RequestMappingHandlerMapping> mappingBeans;
    private volatile List<RequestMappingHandlerMapping> mappings; // looked up at start-up, else on first use

    RateLimitHandlerFilter(HandlerGuards guards, ObjectProvider<RequestMappingHandlerMapping> mappings) {
        this.guards = guards;
        this.mappingBeans = mappings;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        return handler(exchange)
                .flatMap(this::guard)
                .defaultIfEmpty(Optional.empty())
                .flatMap(guard -> guard.isPresent() && firstTime(exchange, guard.get())
                        ? RateLimitWebFilter.decide(guard.get(), exchange, chain)
                        : chain.filter(exchange));
    }

    /** The request's handler method, empty if none (or if resolving it failed: the dispatcher says why). */
    private Mono<HandlerMethod> handler(ServerWebExchange exchange) {
        List<RequestMappingHandlerMapping> all = mappings;
        if (all == null) {
            all = mappingBeans.orderedStream().toList();
            mappings = all;
        }
        return Flux.fromIterable(all).concatMap(mapping -> mapping.getHandler(exchange)).next()
                .onErrorResume(failure -> Mono.empty())
                .ofType(HandlerMethod.class);
    }

    /** The limiter of {@code handler}, empty when it is not rate-limited; built off the event loop if new. */
    private Mono<Optional<HttpLimiter>> guard(HandlerMethod handler) {
        if (guards.known(handler.getMethod())) {
            return Mono.just(Optional.ofNullable(guards.built(handler.getMethod())));
        }
        // Building may connect to the store: never on an event loop.
        return Mono.fromCallable(() -> Optional.ofNullable(guards.guard(handler)))
                .subscribeOn(Schedulers.boundedElastic());
    }

    /** Whether {@code limiter} has not decided this request yet (and now will). */
    private static boolean firstTime(ServerWebExchange exchange, HttpLimiter limiter) {
        Map<String, Object> attributes = exchange.getAttributes();
        @SuppressWarnings("unchecked") // only this class writes the attribute
        Set<HttpLimiter> decided = (Set<HttpLimiter>) attributes.computeIfAbsent(DECIDED,
                name -> ConcurrentHashMap.newKeySet());
        return decided.add(limiter);
    }

    /** Builds the limiter of every mapped handler method, so that a bad annotation stops start-up. */
    void buildAll() {
        List<RequestMappingHandlerMapping> all = mappingBeans.orderedStream().toList();
        all.forEach(mapping -> mapping.getHandlerMethods().values().forEach(guards::guard));
        mappings = all; // looked up here, at start-up: not by the first request, on an event loop
    }

    /** {@link RateLimitWebFilter#ORDER}. */
    @Override
    public int getOrder() {
        return RateLimitWebFilter.ORDER;
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
