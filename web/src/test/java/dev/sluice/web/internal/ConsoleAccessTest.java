package dev.sluice.web.internal;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The console's Host and origin checks, on requests given as headers and a peer. */
class ConsoleAccessTest {

    private static Function<String, List<String>> headers(String... pairs) {
        Map<String, List<String>> map = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            map.computeIfAbsent(pairs[i], k -> new java.util.ArrayList<>()).add(pairs[i + 1]);
        }
        return name -> map.getOrDefault(name, List.of());
    }

    private static ConsoleAccess parse(boolean authenticated, String... params) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < params.length; i += 2) {
            map.put(params[i], params[i + 1]);
        }
        return ConsoleAccess.parse(map::get, authenticated, ConsoleAccess.ALLOWED_HOSTS);
    }

    @Test
    void withoutAuthenticationOnlyLoopbackAndAllowedHostsAreServed() {
        ConsoleAccess open = parse(false, "allowed-hosts", "Console.Example., 10.0.0.5, [2001:DB8::1]");
        for (String host : List.of("localhost", "LOCALHOST:8080", "127.0.0.1", "127.9.9.9:1", "[::1]", "[::1]:80",
                "console.example", "console.example.:443", "10.0.0.5:8080", "[2001:db8::1]:8443")) {
            assertThat(open.refusal("GET", "192.0.2.1", "http", headers("Host", host))).as(host).isNull();
        }
        for (String host : List.of("evil.example", "localhost.evil.example", "10.0.0.6", "[::2]",
                "console.example:99999", "a b", "")) {
            assertThat(open.refusal("GET", "192.0.2.1", "http", headers("Host", host))).as(host)
                    .startsWith("Host '").contains("'allowed-hosts'");
        }
        assertThat(open.refusal("GET", "192.0.2.1", "http", headers())).as("no Host").isNotNull();
        ConsoleAccess authenticated = parse(true);
        assertThat(authenticated.refusal("GET", "192.0.2.1", "http", headers("Host", "evil.example"))).isNull();
        assertThat(parse(true, "allowed-hosts", "console.example")
                .refusal("GET", "192.0.2.1", "http", headers("Host", "evil.example"))).isNotNull();
    }

    @Test
    void badValuesNameTheParameterAndTheValue() {
        for (String bad : List.of("https://console.example", "console.example:8080", "a b", "console.example,",
                "x/y")) {
            assertThatThrownBy(() -> parse(false, "allowed-hosts", bad)).as(bad)
                    .hasMessageStartingWith("'allowed-hosts' must be").hasMessageEndingWith("got '" + bad + "'");
        }
        assertThatThrownBy(() -> parse(false, "trusted-proxies", "10.0.0.0/99"))
                .hasMessageContaining("'trusted-proxies'")
                .hasMessageContaining("10.0.0.0/99");
        assertThatThrownBy(() -> parse(false, "forwarded-header", "x-real-ip"))
                .hasMessageContaining("'forwarded-header'")
                .hasMessageContaining("x-real-ip");
    }

    @Test
    void theOriginIsTheForwardedOneFromATrustedProxyOnly() {
        ConsoleAccess xff = parse(true, "trusted-proxies", "10.0.0.0/8");
        String[] proxied = {"Host", "app:8080", "X-Forwarded-Proto", "https", "X-Forwarded-Host", "console.example"};
        assertThat(xff.refusal("PUT", "10.1.1.1", "http", headers(with(proxied, "Origin", "https://console.example"))))
                .isNull();
        assertThat(xff.refusal("PUT", "10.1.1.1", "http",
                headers(with(proxied, "Origin", "https://console.example:443"))))
                .isNull();
        assertThat(xff.refusal("PUT", "10.1.1.1", "http", headers(with(proxied, "Origin", "http://app:8080"))))
                .isEqualTo("cross-site request refused");
        // The same headers from a peer that is no trusted proxy are the client's own: not believed.
        assertThat(xff.refusal("PUT", "192.0.2.1", "http", headers(with(proxied, "Origin", "https://console.example"))))
                .isEqualTo("cross-site request refused");
        assertThat(xff.refusal("PUT", "192.0.2.1", "http", headers(with(proxied, "Origin", "http://app:8080"))))
                .isNull();
        // A value appended by the nearest proxy wins over one the client wrote.
        assertThat(xff.refusal("PUT", "10.1.1.1", "http", headers("Host", "app", "X-Forwarded-Proto", "http, https",
                "Origin", "https://app"))).isNull();

        ConsoleAccess forwarded = parse(true, "trusted-proxies", "10.0.0.0/8", "forwarded-header", "forwarded");
        // The client's element (forged), the edge proxy's (TLS ended there), the inner proxy's: the edge's counts.
        String chain =
                "for=192.0.2.9;proto=http;host=evil.example, for=192.0.2.1;proto=https;host=\"console.example\", "
                + "for=10.2.2.2;proto=http;host=edge";
        assertThat(forwarded.refusal("DELETE", "10.1.1.1", "http", headers("Host", "app", "Forwarded", chain,
                "Origin", "https://console.example"))).isNull();
        assertThat(forwarded.refusal("DELETE", "10.1.1.1", "http", headers("Host", "app", "Forwarded", chain,
                "Origin", "http://evil.example"))).isEqualTo("cross-site request refused");
        assertThat(forwarded.refusal("DELETE", "10.1.1.1", "http", headers("Host", "app", "X-Forwarded-Proto", "https",
                "Origin", "https://app"))).as("the other header is never read").isEqualTo("cross-site request refused");
        assertThat(forwarded.refusal("DELETE", "10.1.1.1", "http", headers("Host", "app", "X-Forwarded-Proto", "https",
                "Origin", "http://app"))).isNull();
    }

    @Test
    void anotherSiteIsRefusedAndAScriptWithoutOriginIsServed() {
        ConsoleAccess access = parse(true);
        assertThat(access.refusal("POST", "127.0.0.1", "http", headers("Host", "h", "Sec-Fetch-Site", "cross-site")))
                .isEqualTo("cross-site request refused");
        assertThat(access.refusal("POST", "127.0.0.1", "http", headers("Host", "h", "Sec-Fetch-Site", "same-origin",
                "Origin", "http://h:80"))).isNull();
        assertThat(access.refusal("POST", "127.0.0.1", "http", headers("Host", "h", "Origin", "null")))
                .isEqualTo("cross-site request refused");
        assertThat(access.refusal("POST", "127.0.0.1", "http", headers("Host", "h"))).isNull();
        assertThat(access.refusal("GET", "127.0.0.1", "http", headers("Host", "h", "Origin", "http://evil"))).isNull();
    }

    private static String[] with(String[] first, String... more) {
        String[] out = java.util.Arrays.copyOf(first, first.length + more.length);
        System.arraycopy(more, 0, out, first.length, more.length);
        return out;
    }
}
