package dev.sluice.spring.client;

import dev.sluice.Lease;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.Priority;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link ClientHttpRequestInterceptor} for Spring's {@code RestClient} and {@code RestTemplate}
 * that waits for a permit of its {@link Permits} before each request, so that the application's
 * instances sharing the limiter's store stay within a provider's quota together.
 *
 * <pre>{@code
 * RestClient client = RestClient.builder()
 *         .requestInterceptor(RateLimitClientInterceptor.byHost(permits))
 *         .build();
 * restTemplate.getInterceptors().add(RateLimitClientInterceptor.named(permits, "payments"));
 * }</pre>
 *
 * <p>A request that gets no permit within the wait is not sent: the interceptor throws
 * {@link PermitUnavailableException} to the caller. An interrupted wait sends nothing and fails
 * as an {@link InterruptedIOException}, the thread's interrupt status set. The interceptor blocks
 * the calling thread while it waits (as these clients do for the whole exchange); for
 * {@code WebClient}, which must not block, use {@link RateLimitExchangeFilter}.
 *
 * <p>Each response is read for a provider's "slow down" ({@link Permits#learn}: a 429 or 503 with
 * {@code Retry-After}, or {@code RateLimit} headers saying the budget is spent): the key is then
 * paused in the store, for every instance, before the response reaches the caller.
 *
 * <p>A request's {@link Priority} is its attribute {@link #PRIORITY}
 * ({@code restClient.get().uri(..).attribute(RateLimitClientInterceptor.PRIORITY, Priority.LOW)}),
 * else the interceptor's ({@link #withPriority}; {@code RestTemplate} has no request attributes,
 * so a batch job gives its own template an interceptor at {@link Priority#LOW}), else
 * {@link Priority#HIGH}. With {@linkplain Permits.Builder#maxInFlight a cap on calls in flight},
 * the request first waits for its place, which is released when the response is closed (both
 * clients close it once read) or the call fails.
 *
 * <p>Immutable and thread-safe.
 */
public final class RateLimitClientInterceptor implements ClientHttpRequestInterceptor {

    /**
     * The request attribute that gives a request its {@link Priority}, for permits with priorities
     * (see {@link Permits}); the same name as the JAX-RS client filter's request property. A value
     * that is not a {@link Priority} fails the request, naming the attribute.
     */
    public static final String PRIORITY = "dev.sluice.outbound.Priority";

    private final Permits permits;
    private final Function<HttpRequest, String> key;
    private final Priority priority;

    private RateLimitClientInterceptor(Permits permits, Function<HttpRequest, String> key, Priority priority) {
        this.permits = Objects.requireNonNull(permits, "permits");
        this.key = Objects.requireNonNull(key, "key");
        this.priority = priority;
    }

    /** Every request under one key, e.g. the provider's name. */
    public static RateLimitClientInterceptor named(Permits permits, String key) {
        Objects.requireNonNull(key, "key");
        return new RateLimitClientInterceptor(permits, request -> key, Priority.HIGH);
    }

    /** Each request under its target host: one quota per provider host. */
    public static RateLimitClientInterceptor byHost(Permits permits) {
        return new RateLimitClientInterceptor(permits, request -> String.valueOf(request.getURI().getHost()),
                Priority.HIGH);
    }

    /** Each request under the key {@code key} gives it. */
    public static RateLimitClientInterceptor keyedBy(Permits permits, Function<HttpRequest, String> key) {
        return new RateLimitClientInterceptor(permits, key, Priority.HIGH);
    }

    /**
     * This interceptor with {@code priority} for the requests that name none in their attribute
     * {@link #PRIORITY}: {@code Priority.LOW} for a batch job's own client.
     *
     * @throws IllegalArgumentException if the permits have no priorities (no high-priority share)
     */
    public RateLimitClientInterceptor withPriority(Priority priority) {
        Objects.requireNonNull(priority, "priority");
        if (!permits.hasPriorities()) {
            throw new IllegalArgumentException("a priority needs permits with priorities (Permits.builder(limiter)"
                    + ".highPriorityShare(...)), got '" + permits + "'");
        }
        return new RateLimitClientInterceptor(permits, key, priority);
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        String k = key.apply(request);
        Priority p = priority(request.getAttributes().get(PRIORITY), priority);
        Lease place = null;
        try {
            if (permits.maxInFlight() > 0) {
                // the place first: a request waiting for one spends no permit
                place = permits.enter(k);
            }
            permits.acquire(k, p);
            ClientHttpResponse response = execution.execute(request, body);
            try {
                permits.learn(k, response.getStatusCode().value(), response.getHeaders()::getFirst);
            } catch (RuntimeException | IOException e) {
                response.close();
                throw e;
            }
            ClientHttpResponse answer = place == null ? response : new Releasing(response, place);
            place = null;   // held until the response is closed
            return answer;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException failure =
                    new InterruptedIOException("interrupted while waiting for a permit of " + permits);
            failure.initCause(e);
            throw failure;
        } finally {
            if (place != null) {
                place.release();
            }
        }
    }

    /** {@code value} of the attribute {@link #PRIORITY}, or {@code otherwise} when absent. */
    static Priority priority(Object value, Priority otherwise) {
        if (value == null) {
            return otherwise;
        }
        if (value instanceof Priority named) {
            return named;
        }
        throw new IllegalArgumentException("request attribute '" + PRIORITY + "' must be a "
                + Priority.class.getName() + ", got '" + value + "' (" + value.getClass().getName() + ")");
    }

    @Override
    public String toString() {
        return "RateLimitClientInterceptor[" + permits + "]";
    }

    /** A response that gives its place in flight back when closed. */
    private static final class Releasing implements ClientHttpResponse {
        private final ClientHttpResponse response;
        private final Lease place;

        Releasing(ClientHttpResponse response, Lease place) {
            this.response = response;
            this.place = place;
        }

        @Override
        public HttpStatusCode getStatusCode() throws IOException {
            return response.getStatusCode();
        }

        @Override
        public String getStatusText() throws IOException {
            return response.getStatusText();
        }

        @Override
        public HttpHeaders getHeaders() {
            return response.getHeaders();
        }

        @Override
        public InputStream getBody() throws IOException {
            return response.getBody();
        }

        @Override
        public void close() {
            try {
                response.close();
            } finally {
                place.release();   // releasing twice releases once
            }
        }
    }
}
