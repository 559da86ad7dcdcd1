package dev.sluice.jaxrs;

import dev.sluice.web.internal.AfterResponse;
import dev.sluice.web.internal.Guard;
import dev.sluice.web.internal.HttpAnswer;
import dev.sluice.web.internal.Rejection;
import dev.sluice.web.RequestView;
import jakarta.ws.rs.ServiceUnavailableException;
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
 * The per-request side of one rate-limited resource method, around its {@link Guard} built once
 * at start-up: ask the guard, then either let the request through and add the headers on the way
 * out, or abort it with the guard's 429 or 503. Immutable and thread-safe.
 */
final class LimitFilter implements ContainerRequestFilter, ContainerResponseFilter {

    /**
     * Marks a request that proceeded with rate-limit headers, which the response filter writes
     * (also across async resumes) from every layer known by then.
     */
    static final String DECISION = "dev.sluice.jaxrs.decision";
    /**
     * The {@link AfterResponse} of a request that proceeded with something left to do when its
     * response is complete (a lease to return, a refund to decide): called by the response filter
     * with the response's status, once the status is known (after the resource, an async resume
     * or an exception mapper) and before the entity is written.
     */
    static final String COMPLETION = "dev.sluice.jaxrs.completion";
    /**
     * The headers of a refusal thrown as an exception ({@code sluice.reject=exception}): the
     * response filter adds those the mapper's response does not set.
     */
    static final String REFUSAL_HEADERS = "dev.sluice.jaxrs.refusal-headers";
    /** Set by {@link ServletClientAddress} on servlet containers: the socket peer's address. */
    static final String REMOTE_ADDR = "dev.sluice.jaxrs.remote-addr";
    /** The client address when the runtime does not tell it (not a servlet container). */
    static final String UNKNOWN_ADDR = "unknown";

    private static final Logger LOG = LoggerFactory.getLogger(LimitFilter.class);
    private static final AtomicBoolean WARNED_UNKNOWN = new AtomicBoolean();

    private final Guard guard;
    private final Rejection reject;

    LimitFilter(Guard guard, Rejection reject) {
        this.guard = guard;
        this.reject = reject;
    }

    @Override
    public void filter(ContainerRequestContext request) {
        HttpAnswer answer = guard.check(new View(request));
        if (!answer.proceeds()) {
            Response.ResponseBuilder builder = Response.status(answer.status());
            answer.headers().forEach(header -> builder.header(header.name(), header.value()));
            if (reject != Rejection.EXCEPTION) {
                request.abortWith(builder.type(HttpAnswer.PROBLEM_JSON).entity(answer.body()).build());
                return;
            }
            // No entity: the runtime would send an exception's entity past the application's mappers.
            Response response = builder.build();
            request.setProperty(REFUSAL_HEADERS, answer.headers());
            if (answer.status() == Response.Status.SERVICE_UNAVAILABLE.getStatusCode()) {
                throw new ServiceUnavailableException(response);
            }
            throw new RateLimitExceededException(answer.decision(), response, answer.body());
        } else {
            if (!answer.headers().isEmpty()) {
                // Written on the way out, from every layer known by then. None: the store failed open.
                request.setProperty(DECISION, Boolean.TRUE);
            }
            if (answer.afterResponse() != AfterResponse.NONE) {
                request.setProperty(COMPLETION, answer.afterResponse());
            }
        }
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        // Aborted requests come through here too; only one that proceeded with headers is marked.
        if (request.getProperty(DECISION) != null) {
            MultivaluedMap<String, Object> out = response.getHeaders();
            guard.headers(new View(request)).forEach(header -> out.putSingle(header.name(), header.value()));
        }
        if (request.getProperty(REFUSAL_HEADERS) instanceof List<?> headers) {
            // A mapper's own response keeps what it set; the rest of the refusal's headers are added.
            request.removeProperty(REFUSAL_HEADERS);
            MultivaluedMap<String, Object> out = response.getHeaders();
            for (Object item : headers) {
                HttpAnswer.Header header = (HttpAnswer.Header) item;
                out.putIfAbsent(header.name(), List.of(header.value()));
            }
        }
        if (request.getProperty(COMPLETION) instanceof AfterResponse completion) {
            request.removeProperty(COMPLETION);
            completion.complete(response.getStatus());
        }
    }

    /** The request as the guard sees it. */
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

        @Override
        public Object attribute(String name) {
            return request.getProperty(name);
        }

        @Override
        public void setAttribute(String name, Object value) {
            request.setProperty(name, value);
        }

        @Override
        public boolean userInRole(String role) {
            return request.getSecurityContext() != null && request.getSecurityContext().isUserInRole(role);
        }

        @Override
        public String method() {
            return request.getMethod();
        }
    }
}
