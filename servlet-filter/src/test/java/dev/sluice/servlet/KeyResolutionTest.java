package dev.sluice.servlet;

import dev.sluice.testing.LogCapture;
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

    /**
     * Behind a load balancer (here: the test client on loopback) with no {@code trusted-proxies},
     * every client shares the balancer's budget; the first forwarding header is logged once, and
     * nothing else changes.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aForwardingHeaderFromAnUntrustedLoopbackPeerIsLoggedOnceAndIgnored(Container container) throws Exception {
        TestApp app = new TestApp().filter("lb", "/*", "limit", "2/1m");
        String log;
        try (LogCapture capture = LogCapture.start(); var running = container.start(app)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.1")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.2")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=198.51.100.3")).isEqualTo(429);
            for (int i = 0; i < 5; i++) {
                assertThat(status(uri, "X-Forwarded-For", "198.51.100." + (10 + i))).isEqualTo(429);
            }
            log = capture.text();
        }
        assertThat(log.split("filter 'lb': a request from 127\\.0\\.0\\.1 carries X-Forwarded-For, but 127\\.0\\.0\\.1 "
                + "is not in 'trusted-proxies'", -1)).as(log).hasSize(2);
        assertThat(log).contains("WARN dev.sluice.web.internal.CallerResolver").contains("set 'trusted-proxies'");
    }

    /** Stands in for the container's authentication: the user named by {@code X-User} is logged in. */
    static final class LoginFilter implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
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

            // Without a forwarding header the proxy itself is the client.
            assertThat(status(uri)).isEqualTo(200);
        }
        // A proxy writing Forwarded (RFC 7239) is named by forwarded-header: then Forwarded is the header read.
        TestApp forwarded = new TestApp().filter("api", "/*", "limit", "2/1m", "trusted-proxies", "127.0.0.1",
                "forwarded-header", "forwarded");
        try (var running = container.start(forwarded)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "Forwarded", "for=\"[2001:db8::7]:4711\";proto=https")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=\"[2001:db8::7]:4711\"")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=\"[2001:db8::7]\"")).isEqualTo(429);

            // Without a forwarding header the proxy itself is the client.
            assertThat(status(uri)).isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void behindAForwardedProxyAnInjectedXForwardedForDoesNotMintBudgets(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "2/1m", "trusted-proxies", "127.0.0.1",
                "forwarded-header", "forwarded");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            // The proxy appends Forwarded; the client adds X-Forwarded-For of its choosing to every request.
            assertThat(status(uri, "Forwarded", "for=203.0.113.5", "X-Forwarded-For", "198.51.100.1")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=203.0.113.5", "X-Forwarded-For", "198.51.100.2")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=203.0.113.5", "X-Forwarded-For", "198.51.100.3")).isEqualTo(429);
            // X-Forwarded-For alone is not read at all: the proxy itself (the socket peer) pays.
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.4")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.5")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.6")).isEqualTo(429);
            assertThat(status(uri)).isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void behindAnXForwardedForProxyForwardedIsNotRead(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "2/1m", "trusted-proxies", "127.0.0.1");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "X-Forwarded-For", "203.0.113.5", "Forwarded", "for=198.51.100.1")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "203.0.113.5", "Forwarded", "for=198.51.100.2")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "203.0.113.5", "Forwarded", "for=198.51.100.3")).isEqualTo(429);
            // Forwarded alone, by default: not read, the proxy pays.
            assertThat(status(uri, "Forwarded", "for=198.51.100.4")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=198.51.100.5")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=198.51.100.6")).isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void portsAndTheFormsOfOneIpv4AddressAreOneCaller(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "4/1m", "trusted-proxies", "127.0.0.1");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "X-Forwarded-For", "192.0.2.44")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "192.0.2.44:5678")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "::ffff:192.0.2.44")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "[::FFFF:c000:022c]:443")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "192.0.2.44")).isEqualTo(429);
            // None of them fell back to the proxy's own address: its budget is untouched.
            assertThat(status(uri)).isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void portsAndTheFormsOfOneIpv6AddressAreOneCaller(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "5/1m", "trusted-proxies", "127.0.0.1",
                "forwarded-header", "forwarded", "ipv6-prefix", "128");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "Forwarded", "for=\"[2001:db8::1]:443\"")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=\"[2001:DB8:0:0:0:0:0:1]\"")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=\"2001:0db8::0001\";proto=https")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=\"[2001:db8::1%eth0]:80\"")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=\"[2001:db8:0::1]\"")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "For=\"[2001:db8::1]\"")).isEqualTo(429);
            // The next address of the same /64 is another caller at /128.
            assertThat(status(uri, "Forwarded", "for=\"[2001:db8::2]\"")).isEqualTo(200);
            // An IPv4 client with a port, quoted or not, is that client, not the proxy.
            assertThat(status(uri, "Forwarded", "for=192.0.2.60:5678")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=\"192.0.2.60:5678\"")).isEqualTo(200);
            assertThat(status(uri)).isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void ipv6ClientsAreKeyedByTheirSlash64ByDefault(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "4/1m", "trusted-proxies", "127.0.0.1");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            // Four addresses of one /64, as a client rotating privacy addresses would use.
            assertThat(status(uri, "X-Forwarded-For", "2001:db8:1:2::1")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "2001:db8:1:2:a::9")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "[2001:db8:1:2:ffff:ffff:ffff:ffff]:443")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "2001:db8:1:2:1234:5678:9abc:def0")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "2001:db8:1:2:dead:beef::1")).isEqualTo(429);
            // Another /64 has its own budget, even next door.
            assertThat(status(uri, "X-Forwarded-For", "2001:db8:1:3::1")).isEqualTo(200);
            // IPv4 clients stay per address.
            assertThat(status(uri, "X-Forwarded-For", "192.0.2.1")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "192.0.2.2")).isEqualTo(200);
        }
        TestApp wider = new TestApp().filter("api", "/*", "limit", "1/1m", "trusted-proxies", "127.0.0.1",
                "ipv6-prefix", "48");
        try (var running = container.start(wider)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "X-Forwarded-For", "2001:db8:1:2::1")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "2001:db8:1:7::1")).isEqualTo(429);
            assertThat(status(uri, "X-Forwarded-For", "2001:db8:2::1")).isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void unknownAndObfuscatedHopsAreNotClientChosenBudgets(Container container) throws Exception {
        TestApp app = new TestApp().filter("api", "/*", "limit", "2/1m", "trusted-proxies", "127.0.0.1",
                "forwarded-header", "forwarded");
        try (var running = container.start(app)) {
            URI uri = running.uri("/x");
            // The proxy could not name the client; what the client wrote further left must not be believed.
            assertThat(status(uri, "Forwarded", "for=198.51.100.1, for=unknown")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=198.51.100.2, for=_hidden")).isEqualTo(200);
            assertThat(status(uri, "Forwarded", "for=198.51.100.3, for=\"_abc\"")).isEqualTo(429);
            // A hop the proxy wrote without for= is no more an identity.
            assertThat(status(uri, "Forwarded", "for=198.51.100.4, proto=https")).isEqualTo(429);
            // A quoted comma cannot split the proxy's element into a client-chosen one.
            assertThat(status(uri, "Forwarded", "for=\"_x,for=198.51.100.5\"")).isEqualTo(429);
            // They all were the proxy, the last address we can trust.
            assertThat(status(uri)).isEqualTo(429);
        }
        TestApp xff = new TestApp().filter("api", "/*", "limit", "2/1m", "trusted-proxies", "127.0.0.1");
        try (var running = container.start(xff)) {
            URI uri = running.uri("/x");
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.1, unknown")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.2, _hidden")).isEqualTo(200);
            assertThat(status(uri, "X-Forwarded-For", "198.51.100.3, unknown")).isEqualTo(429);
            assertThat(status(uri)).isEqualTo(429);
        }
    }
}
