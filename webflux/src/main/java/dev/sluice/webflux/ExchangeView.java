package dev.sluice.webflux;

import dev.sluice.web.RequestView;
import org.springframework.http.HttpMethod;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.List;

/**
 * A {@link ServerWebExchange} as the seam reads it. One short-lived object per request, reading
 * the exchange lazily; the principal, which WebFlux gives as a {@code Mono}, is resolved before the
 * view is made, so that no method here waits. Query parameters only: a form body is never read
 * (reading it would consume the body the application reads). A user's roles are those of a Spring
 * Security {@code Authentication}, when Spring Security is on the class path.
 */
final class ExchangeView implements RequestView {

    private final ServerWebExchange exchange;
    private final Principal principal;

    ExchangeView(ServerWebExchange exchange, Principal principal) {
        this.exchange = exchange;
        this.principal = principal;
    }

    @Override
    public String header(String name) {
        return exchange.getRequest().getHeaders().getFirst(name);
    }

    @Override
    public List<String> headers(String name) {
        return exchange.getRequest().getHeaders().getOrEmpty(name);
    }

    @Override
    public String principal() {
        return principal == null ? null : principal.getName();
    }

    @Override
    public boolean userInRole(String role) {
        return principal != null && SecurityRoles.PRESENT && SecurityRoles.has(principal, role);
    }

    @Override
    public String param(String name) {
        return exchange.getRequest().getQueryParams().getFirst(name);
    }

    @Override
    public String remoteAddr() {
        InetSocketAddress remote = exchange.getRequest().getRemoteAddress();
        if (remote == null) {
            return null;
        }
        // The literal, never a reverse lookup (which would block the event loop).
        return remote.getAddress() != null ? remote.getAddress().getHostAddress() : remote.getHostString();
    }

    @Override
    public Object attribute(String name) {
        return exchange.getAttribute(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
        if (value == null) {
            exchange.getAttributes().remove(name);
        } else {
            exchange.getAttributes().put(name, value);
        }
    }

    @Override
    public String method() {
        ServerHttpRequest request = exchange.getRequest();
        HttpMethod method = request.getMethod();
        return method == null ? null : method.name();
    }
}
