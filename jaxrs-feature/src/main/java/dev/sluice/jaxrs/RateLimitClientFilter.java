package dev.sluice.jaxrs;

import dev.sluice.Lease;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.Priority;
import jakarta.ws.rs.client.ClientRequestContext;
import jakarta.ws.rs.client.ClientRequestFilter;
import jakarta.ws.rs.client.ClientResponseContext;
import jakarta.ws.rs.client.ClientResponseFilter;

import java.io.InterruptedIOException;
import java.util.Objects;
import java.util.function.Function;

/**
 * A JAX-RS client filter that waits for a permit of its {@link Permits} before each request:
 * register it on a {@code Client} or {@code WebTarget}, and the application's instances sharing
 * the limiter's store stay within the provider's quota together.
 *
 * <pre>{@code
 * Client client = ClientBuilder.newClient()
 *         .register(RateLimitClientFilter.named(permits, "payments"));
 * }</pre>
 *
 * <p>A request that gets no permit within the wait is not sent: the filter throws
 * {@link PermitUnavailableException}, which the client hands to the caller wrapped in a
 * {@code ProcessingException}. An interrupted wait sends nothing and fails as an
 * {@link InterruptedIOException}, the thread's interrupt status set. The filter blocks the thread
 * that sends the request (JAX-RS request filters are synchronous, for asynchronous invocations
 * too); to wait without a thread, use {@link Permits#acquireAsync} or
 * {@link dev.sluice.outbound.RateLimitedHttpClient}.
 *
 * <p>Each response is read for a provider's "slow down" ({@link Permits#learn}: a 429 or 503 with
 * {@code Retry-After}, or {@code RateLimit} headers saying the budget is spent): the key is then
 * paused in the store, for every instance, before the response reaches the caller.
 *
 * <p>With {@linkplain Permits.Builder#maxInFlight a cap on calls in flight}, the request first
 * waits for its place (a lease kept in a request property) and the response
 * filter releases it when the response comes, or the request filter when the permit fails. JAX-RS
 * runs no filter when the request itself fails in the client (a connection refused, a read timed
 * out, a filter after this one throwing): such a place is held until its lease expires, so set the
 * permits' {@linkplain Permits.Builder#inFlightLease lease} just above the client's read timeout.
 */
public final class RateLimitClientFilter implements ClientRequestFilter, ClientResponseFilter {

    /**
     * The request property that gives a request its {@link Priority}, for permits with priorities
     * (see {@link Permits}): {@code target.request().property(RateLimitClientFilter.PRIORITY, Priority.LOW)}.
     * A request without it is {@link Priority#HIGH}; a value that is not a {@link Priority} fails the
     * request, naming the property.
     */
    public static final String PRIORITY = "dev.sluice.outbound.Priority";

    /** The request property holding the request's place in flight, with a cap on calls in flight. */
    private static final String IN_FLIGHT = "dev.sluice.outbound.InFlight";

    private final Permits permits;
    private final Function<ClientRequestContext, String> key;

    private RateLimitClientFilter(Permits permits, Function<ClientRequestContext, String> key) {
        this.permits = Objects.requireNonNull(permits, "permits");
        this.key = Objects.requireNonNull(key, "key");
    }

    /** Every request under one key, e.g. the provider's name. */
    public static RateLimitClientFilter named(Permits permits, String key) {
        Objects.requireNonNull(key, "key");
        return new RateLimitClientFilter(permits, request -> key);
    }

    /** Each request under its target host: one quota per provider host. */
    public static RateLimitClientFilter byHost(Permits permits) {
        return new RateLimitClientFilter(permits, request -> String.valueOf(request.getUri().getHost()));
    }

    /** Each request under the key {@code key} gives it. */
    public static RateLimitClientFilter keyedBy(Permits permits, Function<ClientRequestContext, String> key) {
        return new RateLimitClientFilter(permits, key);
    }

    @Override
    public void filter(ClientRequestContext request) throws InterruptedIOException {
        Lease place = null;
        try {
            if (permits.maxInFlight() > 0) {
                // the place first: a request waiting for one spends no permit
                place = permits.enter(key.apply(request));
                request.setProperty(IN_FLIGHT, place);
            }
            permits.acquire(key.apply(request), priority(request));
            place = null;   // held until the response
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException failure =
                    new InterruptedIOException("interrupted while waiting for a permit of " + permits);
            failure.initCause(e);
            throw failure;
        } finally {
            if (place != null) {
                place.release();
                request.removeProperty(IN_FLIGHT);
            }
        }
    }

    /**
     * Reads the provider's answer for a pause ({@link Permits#learn}; the key is the request's, as
     * before it was sent), then releases the request's place in flight, if it holds one.
     */
    @Override
    public void filter(ClientRequestContext request, ClientResponseContext response) {
        try {
            permits.learn(key.apply(request), response.getStatus(), response::getHeaderString);
        } finally {
            if (request.getProperty(IN_FLIGHT) instanceof Lease place) {
                place.release();
            }
        }
    }

    private static Priority priority(ClientRequestContext request) {
        Object value = request.getProperty(PRIORITY);
        if (value == null || value instanceof Priority) {
            return value == null ? Priority.HIGH : (Priority) value;
        }
        throw new IllegalArgumentException("request property '" + PRIORITY + "' must be a " + Priority.class.getName()
                + ", got '" + value + "' (" + value.getClass().getName() + ")");
    }

    @Override
    public String toString() {
        return "RateLimitClientFilter[" + permits + "]";
    }
}
