package dev.sluice.servlet.internal;

import dev.sluice.web.RequestView;
import jakarta.servlet.http.HttpServletRequest;

import java.security.Principal;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

/**
 * An {@link HttpServletRequest} as a {@link dev.sluice.web.internal.Guard} sees it. One short-lived object per request;
 * each method reads the request lazily, so a key source that is never consulted costs nothing.
 * Shared by the servlet filter and the Spring MVC interceptor of the starter; not API.
 */
public final class ServletRequestView implements RequestView {

    private final HttpServletRequest request;

    public ServletRequestView(HttpServletRequest request) {
        this.request = request;
    }

    @Override
    public String header(String name) {
        return request.getHeader(name);
    }

    @Override
    public List<String> headers(String name) {
        Enumeration<String> values = request.getHeaders(name);
        return values == null || !values.hasMoreElements() ? List.of() : Collections.list(values);
    }

    @Override
    public String principal() {
        Principal principal = request.getUserPrincipal();
        return principal == null ? null : principal.getName();
    }

    @Override
    public String param(String name) {
        return request.getParameter(name);
    }

    @Override
    public String remoteAddr() {
        return request.getRemoteAddr();
    }

    @Override
    public Object attribute(String name) {
        return request.getAttribute(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
        request.setAttribute(name, value);
    }

    @Override
    public boolean userInRole(String role) {
        return request.isUserInRole(role);
    }

    @Override
    public String method() {
        return request.getMethod();
    }
}
