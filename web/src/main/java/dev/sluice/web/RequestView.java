package dev.sluice.web;

import java.util.List;

/**
 * What Sluice needs from an HTTP request: what key resolution reads, and the request's
 * attributes, where the layers of one request meet. The servlet filter and the JAX-RS feature
 * each make one short-lived view per request, reading the request lazily. A {@link LimitResolver}
 * reads requests through it, whichever adapter runs.
 *
 * <p>Implemented by the adapters only: methods added later come with defaults.
 */
public interface RequestView {

    /** The first value of a request header, or {@code null}. */
    String header(String name);

    /** Every value of a request header, in order (each may hold a comma-separated list). */
    List<String> headers(String name);

    /** The authenticated user's name, or {@code null}. */
    String principal();

    /** The first value of a query (or form) parameter, or {@code null}. */
    String param(String name);

    /** The socket peer's address as a literal, e.g. {@code 127.0.0.1}. */
    String remoteAddr();

    /** A request attribute (JAX-RS: property), or {@code null}. */
    Object attribute(String name);

    /** Sets a request attribute (JAX-RS: property). */
    void setAttribute(String name, Object value);

    /** Whether the authenticated user has {@code role} ({@code isUserInRole}); default: no user, no role. */
    default boolean userInRole(String role) {
        return false;
    }

    /** The request's HTTP method in upper case, such as {@code POST}; default: {@code null}, unknown. */
    default String method() {
        return null;
    }
}
