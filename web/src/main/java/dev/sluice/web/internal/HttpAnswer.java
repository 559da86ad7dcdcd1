package dev.sluice.web.internal;

import dev.sluice.Decision;

import java.util.List;
import java.util.Objects;

/**
 * What an adapter does with a request its {@link Guard} checked: let it proceed with
 * {@link #headers()} added, or answer it with {@link #status()}, the headers and a problem
 * {@link #body()} of type {@link #PROBLEM_JSON} instead of the application.
 *
 * @param status  {@link #PROCEED} (0), or the status to answer with: 429 or 503
 * @param headers the headers to set, in order; empty when the store failed open
 * @param body    the {@code application/problem+json} body; {@code null} exactly when proceeding
 * @param afterResponse what the adapter must call, once, when the response of a request that
 *                      proceeds is complete (see {@link AfterResponse}); {@link AfterResponse#NONE} otherwise
 * @param decision   the decision that refused the request (for {@code reject=exception}); {@code null}
 *                   when proceeding
 */
public record HttpAnswer(int status, List<Header> headers, String body, AfterResponse afterResponse,
                         Decision decision) {

    /** The {@link #status()} of a request that proceeds to the application. */
    public static final int PROCEED = 0;
    /** The media type of problem bodies (RFC 9457). */
    public static final String PROBLEM_JSON = "application/problem+json";

    /** Proceed without rate-limit headers: the store failed and the route fails open. */
    static final HttpAnswer FAILED_OPEN = new HttpAnswer(PROCEED, List.of(), null);

    /**
     * One response header.
     *
     * @param name  the header's name
     * @param value its value
     */
    public record Header(String name, String value) {
        /** Validates the components. */
        public Header {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
        }
    }

    /** Validates and copies the components. */
    public HttpAnswer {
        headers = List.copyOf(headers);
        if ((status == PROCEED) != (body == null)) {
            throw new IllegalArgumentException("'body' must be given exactly when answering, got status " + status);
        }
        if (afterResponse == null || (status != PROCEED && afterResponse != AfterResponse.NONE)) {
            throw new IllegalArgumentException("'afterResponse' must be NONE unless proceeding, got status " + status);
        }
        if (status == PROCEED && decision != null) {
            throw new IllegalArgumentException("'decision' must be null when proceeding");
        }
    }

    /** A request that proceeds, with {@code afterResponse} to call when its response is complete. */
    public HttpAnswer(int status, List<Header> headers, String body, AfterResponse afterResponse) {
        this(status, headers, body, afterResponse, null);
    }

    /** An answer with nothing to do when the response completes. */
    public HttpAnswer(int status, List<Header> headers, String body) {
        this(status, headers, body, AfterResponse.NONE);
    }

    /** A refusal: {@code status} with {@code headers} and a problem {@code body}, because of {@code decision}. */
    static HttpAnswer refusal(int status, List<Header> headers, String body, Decision decision) {
        return new HttpAnswer(status, headers, body, AfterResponse.NONE, decision);
    }

    /** Whether the request proceeds to the application. */
    public boolean proceeds() {
        return status == PROCEED;
    }
}
