package dev.sluice.spring.client;

import dev.sluice.Lease;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.Priority;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.Objects;
import java.util.function.Function;

/**
 * An {@link ExchangeFilterFunction} for Spring's {@code WebClient} that holds each request until
 * a permit of its {@link Permits} comes, blocking no thread: the wait is
 * {@link Permits#acquireAsync} (and {@link Permits#enterAsync} with a cap on calls in flight), and
 * the request is sent when its slot comes, from Sluice's timer.
 *
 * <pre>{@code
 * WebClient client = WebClient.builder()
 *         .filter(RateLimitExchangeFilter.byHost(permits))
 *         .build();
 * }</pre>
 *
 * <p>A request that gets no permit within the wait is not sent: the response {@code Mono} fails
 * with {@link PermitUnavailableException}. A subscription cancelled before the request is sent
 * (the caller's {@code timeout(..)}, {@code take}, a disposed subscriber) sends nothing and gives
 * the reservation and the place in flight back, so the slot goes to a later call. Each response is
 * read for a provider's "slow down" ({@link Permits#learnAsync}: a 429 or 503 with
 * {@code Retry-After}, or {@code RateLimit} headers saying the budget is spent) before it is
 * emitted.
 *
 * <p>A request's {@link Priority} is its attribute {@link RateLimitClientInterceptor#PRIORITY}
 * ({@code webClient.get().uri(..).attribute(RateLimitClientInterceptor.PRIORITY, Priority.LOW)}),
 * else the filter's ({@link #withPriority}), else {@link Priority#HIGH}. With
 * {@linkplain Permits.Builder#maxInFlight a cap on calls in flight}, the place is released when the
 * response's body has been read or released (as {@code retrieve()} and {@code exchangeToMono} do),
 * or when the exchange fails or is cancelled; releasing talks to the store, so it runs on Reactor's
 * {@code boundedElastic} scheduler, not on the thread that completed the response.
 *
 * <p>Immutable and thread-safe.
 */
public final class RateLimitExchangeFilter implements ExchangeFilterFunction {

    private final Permits permits;
    private final Function<ClientRequest, String> key;
    private final Priority priority;

    private RateLimitExchangeFilter(Permits permits, Function<ClientRequest, String> key, Priority priority) {
        this.permits = Objects.requireNonNull(permits, "permits");
        this.key = Objects.requireNonNull(key, "key");
        this.priority = priority;
    }

    /** Every request under one key, e.g. the provider's name. */
    public static RateLimitExchangeFilter named(Permits permits, String key) {
        Objects.requireNonNull(key, "key");
        return new RateLimitExchangeFilter(permits, request -> key, Priority.HIGH);
    }

    /** Each request under its target host: one quota per provider host. */
    public static RateLimitExchangeFilter byHost(Permits permits) {
        return new RateLimitExchangeFilter(permits, request -> String.valueOf(request.url().getHost()),
                Priority.HIGH);
    }

    /** Each request under the key {@code key} gives it. */
    public static RateLimitExchangeFilter keyedBy(Permits permits, Function<ClientRequest, String> key) {
        return new RateLimitExchangeFilter(permits, key, Priority.HIGH);
    }

    /**
     * This filter with {@code priority} for the requests that name none in their attribute
     * {@link RateLimitClientInterceptor#PRIORITY}.
     *
     * @throws IllegalArgumentException if the permits have no priorities (no high-priority share)
     */
    public RateLimitExchangeFilter withPriority(Priority priority) {
        Objects.requireNonNull(priority, "priority");
        if (!permits.hasPriorities()) {
            throw new IllegalArgumentException("a priority needs permits with priorities (Permits.builder(limiter)"
                    + ".highPriorityShare(...)), got '" + permits + "'");
        }
        return new RateLimitExchangeFilter(permits, key, priority);
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        return Mono.defer(() -> {
            String k = key.apply(request);
            Priority p = RateLimitClientInterceptor.priority(
                    request.attribute(RateLimitClientInterceptor.PRIORITY).orElse(null), priority);
            if (permits.maxInFlight() == 0) {
                return send(request, next, k, p, null);
            }
            // the place first: a request waiting for one spends no permit. Cancelled while waiting for
            // it, enterAsync stops asking and releases a place granted late; once held, the place is
            // released on failure or cancellation here, else when the response's body is done.
            return Mono.usingWhen(Mono.fromFuture(() -> permits.enterAsync(k), false),
                    place -> send(request, next, k, p, place),
                    place -> Mono.empty(),
                    (place, failure) -> release(place),
                    RateLimitExchangeFilter::release);
        });
    }

    /** Waits for the permit (cancelling the wait gives the reservation back), sends, learns. */
    private Mono<ClientResponse> send(ClientRequest request, ExchangeFunction next, String k, Priority p,
                                      Lease place) {
        return Mono.fromFuture(() -> permits.acquireAsync(k, p), false)
                .then(Mono.defer(() -> next.exchange(request)))
                .map(response -> place == null ? response
                        : response.mutate().body(body -> body.doFinally(signal -> release(place))).build())
                .flatMap(response -> Mono.fromFuture(() -> permits.learnAsync(k, response.statusCode().value(),
                                response.headers().asHttpHeaders()::getFirst), true)
                        .thenReturn(response)
                        // cancelled while learning: nobody will read the body, so free the connection
                        .doOnCancel(() -> response.releaseBody().subscribe()));
    }

    /** Gives {@code place} back off the calling thread: releasing waits for the store. */
    private static Mono<Void> release(Lease place) {
        if (place.held()) {
            Schedulers.boundedElastic().schedule(place::release);
        }
        return Mono.empty();
    }

    @Override
    public String toString() {
        return "RateLimitExchangeFilter[" + permits + "]";
    }
}
