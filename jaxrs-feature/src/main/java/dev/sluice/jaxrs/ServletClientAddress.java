package dev.sluice.jaxrs;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.Context;

/**
 * Tells {@link LimitFilter} the socket peer's address on a servlet container. JAX-RS has no
 * portable remote address, so this is the one class that touches the servlet API; it is registered
 * (as a class, so that the runtime injects it) only when that API is present, and a runtime that
 * cannot inject a servlet request leaves the address unknown.
 *
 * <p>Not API: public, with a public no-arg constructor, only because the feature registers it by
 * class and JAX-RS requires provider classes to have a public constructor (RESTEasy and CXF call it
 * without {@code setAccessible}). Applications have no use for it.
 */
public final class ServletClientAddress implements ContainerRequestFilter {

    @Context
    private HttpServletRequest servletRequest; // a proxy to the current request

    /** For the JAX-RS runtime, which creates and injects the filter; not for applications. */
    public ServletClientAddress() {
    }

    @Override
    public void filter(ContainerRequestContext request) {
        String address;
        try {
            address = servletRequest == null ? null : servletRequest.getRemoteAddr();
        } catch (RuntimeException e) {
            address = null; // servlet API present, but this request did not come through a servlet
        }
        if (address != null) {
            request.setProperty(LimitFilter.REMOTE_ADDR, address);
        }
    }
}
