package dev.sluice.servlet;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import java.io.IOException;
import java.net.URI;
import java.security.Principal;

import static dev.sluice.servlet.Http.get;
import static org.assertj.core.api.Assertions.assertThat;

/** Who pays: key sources in order, and client addresses believed only through trusted proxies. */
class KeyResolutionTest {

    static Iterable<Container> containers() {
        return Container.selected();
    }

    private static int status(URI uri, String... headers) {
        return get(uri, headers).statusCode();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void headerKeyWinsOverIpAndEachKeyHasItsOwnBudget(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "2/1m", "key", "header:X-API-Key,ip");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "X-API-Key", "alpha")).isEqualTo(200);
            assertThat(status(uri, "X-API-Key", "alpha")).isEqualTo(200);
            assertThat(status(uri, "X-API-Key", "alpha")).isEqualTo(429);
            // Same socket address, another key: its own budget.
            assertThat(status(uri, "X-API-Key", "beta")).isEqualTo(200);
            // No key: the address pays, untouched by the keyed requests from it.
            assertThat(status(uri)).isEqualTo(200);
            assertThat(status(uri)).isEqualTo(200);
            assertThat(status(uri)).isEqualTo(429);
            assertThat(status(uri, "X-API-Key", "beta")).isEqualTo(200);
        }
    }

    /** Stands in for the container's authentication: the user named by {@code X-User} is logged in. */
    static final class LoginFilter implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
            HttpServletRequest request = (HttpServletRequest) req;
            String user = request.getHeader("X-User");
            chain.doFilter(user == null ? request : new HttpServletRequestWrapper(request) {
                @Override
                public Principal getUserPrincipal() {
                    return () -> user;
                }
            }, res);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void principalKeyUsesTheAuthenticatedUser(Container container) throws Exception {
        TestApp app = new TestApp()
                .instance("login", new LoginFilter(), "/*")
                .filter("api", "/*", "limit", "1/1m", "key", "principal,ip");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "X-User", "ann")).isEqualTo(200);
            assertThat(status(uri, "X-User", "ann")).isEqualTo(429);
            assertThat(status(uri, "X-User", "bob")).isEqualTo(200);
            assertThat(status(uri)).isEqualTo(200);
            assertThat(status(uri)).isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void paramKeyIsUsedWhenPresent(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "1/1m", "key", "param:api_key,ip");
        try (var running = container.start(app)) {
            assertThat(status(running.uri("/x?api_key=one"))).isEqualTo(200);
            assertThat(status(running.uri("/x?api_key=one"))).isEqualTo(429);
            assertThat(status(running.uri("/x?api_key=two"))).isEqualTo(200);
            assertThat(status(running.uri("/x"))).isEqualTo(200);
            assertThat(status(running.uri("/x"))).isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void forwardingHeadersFromAnUntrustedPeerAreIgnored(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "2/1m");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.1")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.2")).isEqualTo(200);
            // A third invented client address is still 127.0.0.1 paying.
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.3")).isEqualTo(429);
            assertThat(status(uri, "Forwarded", "for=198.51.100.4")).isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void behindATrustedProxyEachForwardedClientHasItsOwnBudget(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "2/1m", "trusted-proxies", "127.0.0.1");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "X-Forwarded-For", "203.0.113.1")).isEqualTo(200);
            // The rightmost untrusted hop is the client; an address the client prepended is not.
            assertThat(status(uri, "X-Forwarded-For", "192.0.2.99, 203.0.113.1")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "203.0.113.1")).isEqualTo(429);

            assertThat(status(uri, "X-Forwarded-For", "203.0.113.2")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "203.0.113.2, 127.0.0.1")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "203.0.113.2")).isEqualTo(429);

            assertThat(status(uri, "Forwarded", "for=\"[2001:db8::7]:4711\";proto=https")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=\"[2001:db8::7]:4711\"")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=\"[2001:db8::7]\"")).isEqualTo(429);

            // Without a forwarding header the proxy itself is the client.
            assertThat(status(uri)).isEqualTo(200);
        }
    }
}
