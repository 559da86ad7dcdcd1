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
 */
final class ServletClientAddress implements ContainerRequestFilter {

    @Context
    private HttpServletRequest servletRequest; // a proxy to the current request

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
