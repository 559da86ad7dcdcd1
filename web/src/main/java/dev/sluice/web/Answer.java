package dev.sluice.web;

import java.util.List;
import java.util.Objects;

/**
 * What an adapter renders for one request its {@link HttpLimiter} checked: either the headers to
 * add while the application answers ({@link #proceeds()}), or a whole response of its own, a
 * {@code 429 Too Many Requests} or {@code 503 Service Unavailable} with {@code Retry-After}, the
 * rate-limit headers and an RFC 9457 problem body. The adapter sets the headers before the
 * application writes anything, in order, replacing any of the same name.
 *
 * <pre>{@code
 * answer.headers().forEach(h -> response.setHeader(h.name(), h.value()));
 * if (!answer.proceeds()) {
 *     response.setStatus(answer.status());
 *     response.setContentType(answer.contentType());
 *     response.getWriter().write(answer.body());
 * }
 * }</pre>
 *
 * @param status      {@link #PROCEED} (0): the application answers; else the status to answer with
 * @param headers     the response headers to set, in order; empty when the store failed open
 * @param body        the problem body, UTF-8 text; {@code null} exactly when proceeding
 * @param contentType the body's media type, {@value #PROBLEM_JSON}; {@code null} exactly when proceeding
 */
public record Answer(int status, List<Header> headers, String body, String contentType) {

    /** The {@link #status()} of a request that proceeds to the application. */
    public static final int PROCEED = 0;
    /** The media type of problem bodies (RFC 9457). */
    public static final String PROBLEM_JSON = "application/problem+json";

    /** Validates and copies the components. */
    public Answer {
        headers = List.copyOf(headers);
        if ((status == PROCEED) != (body == null) || (body == null) != (contentType == null)) {
            throw new IllegalArgumentException("'body' and 'contentType' must be given exactly when answering, got "
                    + "status " + status);
        }
        if (status != PROCEED && (status < 100 || status > 599)) {
            throw new IllegalArgumentException("'status' must be 0 or an HTTP status, got " + status);
        }
    }

    /** Whether the request proceeds to the application, which answers it. */
    public boolean proceeds() {
        return status == PROCEED;
    }

    /**
     * One response header.
     *
     * @param name  the header's name, such as {@code Retry-After}
     * @param value its value
     */
    public record Header(String name, String value) {
        /** Validates the components. */
        public Header {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
        }
    }
}
