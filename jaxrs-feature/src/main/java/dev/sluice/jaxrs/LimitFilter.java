package dev.sluice.jaxrs;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.web.SluiceConfig.HeaderStyle;
import dev.sluice.web.CallerResolver;
import dev.sluice.web.HttpAnswers;
import dev.sluice.web.RequestView;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.Principal;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The per-request side of one rate-limited resource method, built once at start-up: resolve the
 * caller, decide once (waiting at most the limiter's timeout), then either let the request through
 * and add the headers on the way out, or abort it with 429 or 503. Immutable and thread-safe.
 */
final class LimitFilter implements ContainerRequestFilter, ContainerResponseFilter {

    /**
     * Carries the layers of an allowed request (see {@link HttpAnswers.Layers}) from the request
     * filter to the response filter (also across async resumes).
     */
    static final String DECISION = "dev.sluice.jaxrs.decision";
    /** Set by {@link ServletClientAddress} on servlet containers: the socket peer's address. */
    static final String REMOTE_ADDR = "dev.sluice.jaxrs.remote-addr";
    /** The client address when the runtime does not tell it (not a servlet container). */
    static final String UNKNOWN_ADDR = "unknown";

    private static final Logger LOG = LoggerFactory.getLogger(LimitFilter.class);
    private static final AtomicBoolean WARNED_UNKNOWN = new AtomicBoolean();

    private final RateLimiter limiter;
    private final CallerResolver resolver;
    private final HeaderStyle headers;
    private final boolean partitionKey;

    LimitFilter(RateLimiter limiter, CallerResolver resolver, HeaderStyle headers, boolean partitionKey) {
        this.limiter = limiter;
        this.resolver = resolver;
        this.headers = headers;
        this.partitionKey = partitionKey;
    }

    @Override
    public void filter(ContainerRequestContext request) {
        String caller = resolver.resolve(new View(request));
        Decision decision = limiter.decide(caller);
        switch (decision.outcome()) {
            case ALLOWED, SHADOW_REJECTED -> {
                // Written on the way out, from every layer known by then.
                layers(request).add(decision, pk(caller), headers);
                request.setProperty(DECISION, Boolean.TRUE);
            }
            case FAILED_OPEN -> {
                // Let it through without headers: we know nothing about the caller's budget. The limiter logged it.
            }
            case REJECTED, UNSATISFIABLE -> {
                Response.ResponseBuilder answer = Response.status(429)
                        .header("Retry-After", HttpAnswers.retryAfterSeconds(decision))
                        .type(HttpAnswers.PROBLEM_JSON)
                        .entity(HttpAnswers.tooManyRequests(decision, headers));
                HttpAnswers.writeHeaders(layers(request).add(decision, pk(caller), headers), headers, answer::header);
                request.abortWith(answer.build());
            }
            case FAILED_CLOSED -> request.abortWith(Response.status(503)
                    .header("Retry-After", HttpAnswers.retryAfterSeconds(decision))
                    .type(HttpAnswers.PROBLEM_JSON)
                    .entity(HttpAnswers.serviceUnavailable())
                    .build());
        }
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        // Aborted requests come through here too; only an allowed one is marked.
        if (request.getProperty(DECISION) != null
                && request.getProperty(HttpAnswers.LAYERS) instanceof HttpAnswers.Layers layers) {
            MultivaluedMap<String, Object> out = response.getHeaders();
            HttpAnswers.writeHeaders(layers.all(), headers, out::putSingle);
        }
    }

    private static HttpAnswers.Layers layers(ContainerRequestContext request) {
        return HttpAnswers.Layers.of(request::getProperty, request::setProperty);
    }

    private String pk(String caller) {
        return partitionKey && headers.draft() ? HttpAnswers.PartitionKeys.of(caller) : null;
    }

    /** The request as key resolution sees it. */
    private record View(ContainerRequestContext request) implements RequestView {

        @Override
        public String header(String name) {
            return request.getHeaders().getFirst(name);
        }

        @Override
        public List<String> headers(String name) {
            List<String> values = request.getHeaders().get(name);
            return values == null ? List.of() : values;
        }

        @Override
        public String principal() {
            Principal principal = request.getSecurityContext() == null ? null
                    : request.getSecurityContext().getUserPrincipal();
            return principal == null ? null : principal.getName();
        }

        @Override
        public String param(String name) {
            // Query parameters only: reading a form here would consume the entity the resource needs.
            return request.getUriInfo().getQueryParameters().getFirst(name);
        }

        @Override
        public String remoteAddr() {
            if (request.getProperty(REMOTE_ADDR) instanceof String address) {
                return address;
            }
            if (WARNED_UNKNOWN.compareAndSet(false, true)) {
                LOG.warn("This JAX-RS runtime does not tell the client address (not a servlet container): every caller "
                        + "keyed by 'ip' shares one budget; key such routes by header:NAME or principal");
            }
            return UNKNOWN_ADDR;
        }
    }
}
