package dev.sluice.web;

import java.util.List;

/**
 * What key resolution needs from an HTTP request, so that the servlet filter and the JAX-RS
 * feature resolve callers with the same code.
 *
 * <p>Not API: this package may change in any release.
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
}
