package dev.sluice.jaxrs;

import dev.sluice.Decision;
import jakarta.ws.rs.ClientErrorException;
import jakarta.ws.rs.core.Response;

/**
 * Thrown by the rate-limit filter instead of answering, with {@code sluice.reject=exception}, for
 * a request a limit refused ({@code 429 Too Many Requests}), so that the application's own
 * {@code ExceptionMapper} writes the response in its own format:
 *
 * <pre>{@code
 * @Provider
 * public class TooManyRequests implements ExceptionMapper<RateLimitExceededException> {
 *     public Response toResponse(RateLimitExceededException e) {
 *         return Response.status(429).type(MediaType.APPLICATION_JSON)
 *                 .entity(new ApiError("rate_limited", e.policy())).build();
 *     }
 * }
 * }</pre>
 *
 * <p>{@link #getResponse()} is {@code 429} with {@code Retry-After} and the rate-limit headers,
 * without an entity: Jakarta REST hands an exception whose response has an entity straight to the
 * client, past every mapper. Register a mapper, then; without one the client gets that bodiless
 * 429 ({@link #problem()} is the problem body Sluice would have written). The headers reach the
 * client even from a mapper that builds a response of its own: the feature adds, on the way out,
 * each of them the mapper's response does not set itself.
 *
 * <p>A closed route whose store cannot decide throws, in the same mode, a
 * {@link jakarta.ws.rs.ServiceUnavailableException} ({@code 503} with {@code Retry-After}, no
 * entity); a mapper finds the route's policies in the request property
 * {@link dev.sluice.web.RequestAttributes#POLICY}.
 */
public class RateLimitExceededException extends ClientErrorException {

    private static final long serialVersionUID = 1L;

    /** The refusal; not serialised. */
    private final transient Decision decision;
    private final String problem;

    /**
     * An exception for {@code decision}.
     *
     * @param decision the refusal
     * @param response the 429 answer with its headers, without an entity
     * @param problem  the {@code application/problem+json} body Sluice would have written
     */
    public RateLimitExceededException(Decision decision, Response response, String problem) {
        super(message(decision), response);
        this.decision = decision;
        this.problem = problem;
    }

    private static String message(Decision decision) {
        Decision.Quota binding = decision.binding();
        return "Rate limit exceeded" + (binding == null ? "" : " for policy '" + binding.limit().policy() + "'");
    }

    /** The decision that refused the request: its limits, what is left, when to retry. */
    public Decision decision() {
        return decision;
    }

    /** The RFC 9457 {@code application/problem+json} body Sluice answers with when it writes the refusal itself. */
    public String problem() {
        return problem;
    }

    /** The policy that refused the request, or {@code null} when none did alone (an unsatisfiable cost). */
    public String policy() {
        Decision.Quota binding = decision == null ? null : decision.binding();
        return binding == null ? null : binding.limit().policy();
    }
}
