package dev.sluice.webflux;

import dev.sluice.web.Answer;
import dev.sluice.web.HttpLimiter;
import dev.sluice.web.RequestView;
import dev.sluice.web.Verdict;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.ErrorResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiPredicate;

/**
 * A Spring WebFlux {@link WebFilter} that rate-limits the requests whose path matches its
 * {@code url-patterns}: one filter per policy, as the servlet filter is, deciding with an
 * {@link HttpLimiter} built from Sluice's configuration vocabulary. The Spring Boot starter makes one
 * per {@code sluice.filters.<name>.*} in a reactive application; in Java:
 *
 * <pre>{@code
 * @Bean(destroyMethod = "close")
 * RateLimitWebFilter search() {
 *     HttpLimiter limiter = HttpLimiter.builder("filter 'search'").name("search")
 *             .parameters(Map.of("limit", "100/1m", "key", "header:X-API-Key,ip")::get).build();
 *     return new RateLimitWebFilter(limiter, List.of("/search/*"));
 * }
 * }</pre>
 *
 * <p>Per request it never blocks: the principal is read from the exchange's {@code Mono}, the
 * verdict from the limiter's {@code CompletionStage} (within its {@code timeout}); on Reactor Netty
 * a verdict that waited on its store is handed back to the connection's event loop, so the
 * application's chain runs where WebFlux runs it (elsewhere, on the thread that completed the
 * decision). The request
 * proceeds with the rate-limit headers, or the filter answers {@code 429} or {@code 503} itself
 * with {@code Retry-After} and a problem body ({@code application/problem+json}). A failure of the
 * request's own code (a {@code KeyResolver}) fails the request, never loses it.
 *
 * <p>With {@code charge=after} or {@code algorithm=concurrency} the end of the response is when
 * the rest of the chain completes (the response's status, {@code 200} if none was set), fails
 * (once the response is committed, its status; before that the status of an
 * {@link ErrorResponse} such as {@code ResponseStatusException}, else {@code 500}) or is cancelled,
 * as when the client goes away mid-request (the status sent if the response is committed, else
 * {@code 500}); a request cancelled while its decision is still under way is settled when the
 * decision comes. Every decided request carries the attributes of
 * {@link dev.sluice.web.RequestAttributes} as exchange attributes.
 *
 * <p>Ordered right after Spring Security's filter chain ({@link #ORDER}), so that {@code principal}
 * keys see the signed-in user. {@code tier=role} reads the roles of a principal that is a Spring
 * Security {@code Authentication} (an authority {@code ROLE_x} is the role {@code x}); any other
 * principal has none. Not supported here: {@code param:} keys from a form body (query parameters
 * only), and {@code reject} forms other than {@code problem}. Thread-safe and immutable;
 * {@link #close} closes the limiter.
 */
public final class RateLimitWebFilter implements WebFilter, Ordered, AutoCloseable {

    /** {@value}: right after Spring Security's {@code WebFilterChainProxy} ({@code -100}). */
    public static final int ORDER = -99;

    /** The status of a response that failed or was cancelled before any status was sent. */
    private static final int FAILED = 500;
    private static final int OK = 200;

    private final HttpLimiter limiter;
    private final UrlPatterns paths;
    /** The requests left alone although their path matches, {@code null}: none. */
    private final BiPredicate<ServerWebExchange, RequestView> skip;

    /**
     * A filter deciding the requests whose path matches one of {@code urlPatterns} with {@code limiter}.
     *
     * @param limiter     the limiter, which {@link #close} closes
     * @param urlPatterns servlet url-patterns ({@code /api/*}, {@code *.json}, {@code /orders},
     *                    {@code /*}), matched against the path within the application; empty: every path
     * @throws IllegalArgumentException naming the first pattern that is not a url-pattern
     */
    public RateLimitWebFilter(HttpLimiter limiter, List<String> urlPatterns) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.paths = UrlPatterns.of(List.copyOf(Objects.requireNonNull(urlPatterns, "urlPatterns")));
        this.skip = null;
    }

    private RateLimitWebFilter(RateLimitWebFilter filter, BiPredicate<ServerWebExchange, RequestView> skip) {
        this.limiter = filter.limiter;
        this.paths = filter.paths;
        this.skip = skip;
    }

    /**
     * This filter, leaving alone (undecided, without headers) the requests of its paths that
     * {@code skip} is true for. {@code skip} is given the exchange and the request as the limiter
     * reads it, the principal resolved, and must not block; it may set request attributes for a
     * {@code KeyResolver}. The copy shares this filter's limiter: close one of them.
     *
     * @param skip whether to leave a request alone
     * @return a filter that skips those requests
     */
    public RateLimitWebFilter skipping(BiPredicate<ServerWebExchange, RequestView> skip) {
        return new RateLimitWebFilter(this, Objects.requireNonNull(skip, "skip"));
    }

    /** Decides the request once and lets it proceed, or answers 429 or 503 itself. */
    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!paths.matches(exchange.getRequest().getPath().pathWithinApplication().value())) {
            return chain.filter(exchange);
        }
        return decide(limiter, exchange, chain, skip);
    }

    /**
     * Decides {@code exchange} with {@code limiter} as this filter decides the requests it matches
     * (the principal, the verdict, the headers, the {@code 429} or {@code 503} answer, the end of the
     * response for leases and {@code charge=after}), for an adapter that chooses its limiter
     * otherwise, such as the Spring Boot starter's {@code @RateLimit} on handler methods. Never
     * blocks; each call decides once.
     *
     * @param limiter  the limiter deciding the request, not closed here
     * @param exchange the request and its response
     * @param chain    the rest of the chain, run when the request proceeds
     * @return completes when the response does, as the rest of the chain's
     */
    public static Mono<Void> decide(HttpLimiter limiter, ServerWebExchange exchange, WebFilterChain chain) {
        return decide(limiter, exchange, chain, null);
    }

    private static Mono<Void> decide(HttpLimiter limiter, ServerWebExchange exchange, WebFilterChain chain,
                                     BiPredicate<ServerWebExchange, RequestView> skip) {
        Objects.requireNonNull(limiter, "limiter");
        return exchange.getPrincipal().map(Optional::<Principal>of)
                .defaultIfEmpty(Optional.empty())
                .flatMap(principal -> {
                    ExchangeView view = new ExchangeView(exchange, principal.orElse(null));
                    if (skip != null && skip.test(exchange, view)) {
                        return chain.filter(exchange);
                    }
                    return verdict(limiter, view, EventLoops.of(exchange))
                            .flatMap(verdict -> answer(exchange, chain, verdict));
                });
    }

    /**
     * The limiter's verdict as a {@code Mono} that always ends: with the verdict, or with the
     * stage's failure (unwrapped), or with an error if the stage gives none. A verdict that comes
     * after the subscriber cancelled, or is discarded, is settled at once, so that a lease taken
     * for a request nobody waits for any more is given back.
     */
    static Mono<Verdict> verdict(HttpLimiter limiter, dev.sluice.web.RequestView view, Executor loop) {
        return Mono.<Verdict>create(sink -> {
            AtomicBoolean cancelled = new AtomicBoolean();
            sink.onCancel(() -> cancelled.set(true));
            CompletionStage<Verdict> stage = limiter.check(view); // a throw here fails the sink (create catches it)
            stage.whenComplete((verdict, failure) -> EventLoops.run(loop, () -> {
                try {
                    if (failure != null) {
                        sink.error(unwrapped(failure));
                    } else if (verdict == null) {
                        sink.error(new IllegalStateException("the limiter gave no verdict"));
                    } else {
                        sink.success(verdict);
                        if (cancelled.get()) {
                            verdict.responseEnded(FAILED); // nobody took it: a lease goes back
                        }
                    }
                } catch (RuntimeException | Error e) {
                    // Never lost in the stage: whatever a subscriber threw ends the Mono.
                    if (verdict != null) {
                        verdict.responseEnded(FAILED);
                    }
                    sink.error(e);
                }
            }));
        }).doOnDiscard(Verdict.class, v -> v.responseEnded(FAILED));
    }

    private static Throwable unwrapped(Throwable failure) {
        Throwable t = failure;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static Mono<Void> answer(ServerWebExchange exchange, WebFilterChain chain, Verdict verdict) {
        ServerHttpResponse response = exchange.getResponse();
        Answer answer = verdict.answer();
        // Before the chain: once the application writes, the response is committed.
        for (Answer.Header header : answer.headers()) {
            response.getHeaders().set(header.name(), header.value());
        }
        if (!verdict.proceeds()) {
            byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
            response.setStatusCode(HttpStatusCode.valueOf(answer.status()));
            response.getHeaders().setContentType(MediaType.parseMediaType(answer.contentType()));
            response.getHeaders().setContentLength(body.length);
            return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
        }
        if (!verdict.awaitsEnd()) {
            return chain.filter(exchange);
        }
        return Mono.defer(() -> chain.filter(exchange))
                .doOnError(failure -> verdict.responseEnded(failed(response, failure)))
                .doFinally(signal -> verdict.responseEnded(signal == SignalType.ON_COMPLETE ? status(response)
                        : failed(response, null)));
    }

    /** The status of a response that completed: the one set, else 200. */
    private static int status(ServerHttpResponse response) {
        HttpStatusCode status = response.getStatusCode();
        return status == null ? OK : status.value();
    }

    /**
     * The status a failed or cancelled response counts as: once committed, the one sent; before that,
     * the status an {@link ErrorResponse} asks for, else 500.
     */
    private static int failed(ServerHttpResponse response, Throwable failure) {
        if (response.isCommitted()) {
            return status(response);
        }
        return failure instanceof ErrorResponse error ? error.getStatusCode().value() : FAILED;
    }

    /** {@link #ORDER}. */
    @Override
    public int getOrder() {
        return ORDER;
    }

    /**
     * Whether this filter's limiter has stopped waiting on its store after repeated failures, for
     * health checks; {@code false} for a filter with only a concurrency limit.
     */
    public boolean storeCircuitOpen() {
        return limiter.storeCircuitOpen();
    }

    /** Closes the limiter: leaves the policy registry, releases the application's store. */
    @Override
    public void close() {
        limiter.close();
    }

    @Override
    public String toString() {
        return "RateLimitWebFilter[" + limiter + ", url-patterns " + paths + (skip == null ? "" : ", skipping")
                + "]";
    }
}
