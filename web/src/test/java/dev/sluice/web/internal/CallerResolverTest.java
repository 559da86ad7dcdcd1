package dev.sluice.web.internal;

import dev.sluice.web.RequestView;
import dev.sluice.internal.Keys;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CallerResolverTest {

    /** A request seen from the adapters' side. */
    record Request(String remoteAddr, Map<String, List<String>> headerMap, Map<String, String> params, String principal)
            implements RequestView {
        @Override
        public String header(String name) {
            List<String> values = headers(name);
            return values.isEmpty() ? null : values.get(0);
        }

        @Override
        public List<String> headers(String name) {
            return headerMap.getOrDefault(name, List.of());
        }

        @Override
        public String param(String name) {
            return params.get(name);
        }

        @Override
        public Object attribute(String name) {
            return null;
        }

        @Override
        public void setAttribute(String name, Object value) {
        }
    }

    /** A request from {@code peer} with headers {@code name, value, ...}; a repeated name is a second header line. */
    private static Request from(String peer, String... headerPairs) {
        Map<String, List<String>> headers = new HashMap<>();
        for (int i = 0; i < headerPairs.length; i += 2) {
            headers.computeIfAbsent(headerPairs[i], k -> new ArrayList<>()).add(headerPairs[i + 1]);
        }
        return new Request(peer, headers, Map.of("key", "p-123"), null);
    }

    private static CallerResolver resolver(String key, String trusted) {
        return resolver(key, trusted, "x-forwarded-for", "64");
    }

    /** A resolver configured as web.xml would, through the one parser. */
    private static CallerResolver resolver(String key, String trusted, String forwardedHeader, String ipv6Prefix) {
        Map<String, String> params = Map.of("limit", "1/s", "key", key, "trusted-proxies", trusted,
                "forwarded-header", forwardedHeader, "ipv6-prefix", ipv6Prefix);
        return new CallerResolver(RouteSpec.parse(params::get, "p").key(), WebSettings.parse(params::get));
    }

    @Test
    void sourcesAreTriedInOrderAndIpAlwaysAnswers() {
        CallerResolver r = resolver("header:X-API-Key,param:key,ip", "");
        assertThat(r.resolve(from("192.0.2.7", "X-API-Key", "k-1"))).isEqualTo("key~k-1");
        assertThat(r.resolve(from("192.0.2.7"))).isEqualTo("key~p-123");
        assertThat(resolver("header:X-API-Key,principal", "").resolve(from("192.0.2.7"))).isEqualTo("ip~192.0.2.7");
    }

    @Test
    void forwardingHeadersFromAnUntrustedPeerAreIgnored() {
        CallerResolver r = resolver("ip", "10.0.0.0/8");
        assertThat(r.resolve(from("192.0.2.7", "X-Forwarded-For", "203.0.113.9"))).isEqualTo("ip~192.0.2.7");
        assertThat(resolver("ip", "").resolve(from("192.0.2.7", "X-Forwarded-For", "203.0.113.9")))
                .isEqualTo("ip~192.0.2.7");
    }

    @Test
    void throughTrustedProxiesTheRightmostUntrustedHopIsTheClient() {
        CallerResolver r = resolver("ip", "10.0.0.0/8, 127.0.0.1");
        // the client may prepend anything; only what trusted proxies appended counts
        assertThat(r.resolve(from("10.0.0.5", "X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.1.1.1")))
                .isEqualTo("ip~203.0.113.9");
        assertThat(resolver("ip", "10.0.0.0/8, 127.0.0.1", "forwarded", "128")
                .resolve(from("127.0.0.1", "Forwarded", "for=\"[2001:db8::1]:4711\";proto=https")))
                .isEqualTo("ip~2001:db8::1");
        assertThat(r.resolve(from("127.0.0.1", "X-Forwarded-For", "garbage, 203.0.113.9"))).isEqualTo("ip~203.0.113.9");
        assertThat(r.resolve(from("127.0.0.1", "X-Forwarded-For", "203.0.113.9, garbage"))).isEqualTo("ip~127.0.0.1");
        assertThat(r.resolve(from("127.0.0.1", "X-Forwarded-For", "10.2.2.2"))).isEqualTo("ip~127.0.0.1");
    }

    @Test
    void aHopWithAPortIsThatAddressAndEveryFormOfOneAddressIsOneCaller() {
        CallerResolver r = resolver("ip", "127.0.0.1");
        for (String form : List.of("192.0.2.44", "192.0.2.44:5678", "::ffff:192.0.2.44", "[::FFFF:c000:22c]:443",
                "[::ffff:192.0.2.44]", "0:0:0:0:0:ffff:192.0.2.44")) {
            assertThat(r.resolve(from("127.0.0.1", "X-Forwarded-For", form))).as(form).isEqualTo("ip~192.0.2.44");
        }
        // The socket peer is normalised too: Jetty says 0:0:0:0:0:0:0:1 where Tomcat says ::1.
        assertThat(resolver("ip", "").resolve(from("::FFFF:192.0.2.7"))).isEqualTo("ip~192.0.2.7");
        assertThat(resolver("ip", "").resolve(from("192.0.2.7"))).isEqualTo("ip~192.0.2.7");
    }

    @Test
    void onlyTheConfiguredForwardingHeaderIsRead() {
        CallerResolver xff = resolver("ip", "127.0.0.1");
        CallerResolver forwarded = resolver("ip", "127.0.0.1", "forwarded", "64");
        // A proxy that appends Forwarded; the client adds an X-Forwarded-For of its choosing.
        Request spoofed = from("127.0.0.1", "Forwarded", "for=203.0.113.5", "X-Forwarded-For", "198.51.100.1");
        assertThat(forwarded.resolve(spoofed)).isEqualTo("ip~203.0.113.5");
        assertThat(forwarded.resolve(from("127.0.0.1", "X-Forwarded-For", "198.51.100.1"))).isEqualTo("ip~127.0.0.1");
        // And the other way round: the default reads X-Forwarded-For only.
        assertThat(xff.resolve(spoofed)).isEqualTo("ip~198.51.100.1");
        assertThat(xff.resolve(from("127.0.0.1", "Forwarded", "for=203.0.113.5"))).isEqualTo("ip~127.0.0.1");
        // Several header lines are one list, in order.
        assertThat(
                forwarded.resolve(from("127.0.0.1", "Forwarded", "for=198.51.100.1", "Forwarded", "for=203.0.113.5")))
                .isEqualTo("ip~203.0.113.5");
        assertThat(xff.resolve(from("127.0.0.1", "X-Forwarded-For", "198.51.100.1", "X-Forwarded-For", "203.0.113.5")))
                .isEqualTo("ip~203.0.113.5");
    }

    @Test
    void forwardedElementsAreParsedWithTheirQuotesAndParameters() {
        CallerResolver r = resolver("ip", "127.0.0.1, 10.0.0.0/8", "forwarded", "128");
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=192.0.2.60:5678"))).isEqualTo("ip~192.0.2.60");
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=\"192.0.2.60:5678\""))).isEqualTo("ip~192.0.2.60");
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "proto=https;For=\"[2001:DB8::1]:443\";by=10.0.0.1")))
                .isEqualTo("ip~2001:db8::1");
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=\"[2001:db8::1]:_port\"")))
                .isEqualTo("ip~2001:db8::1");
        assertThat(
                r.resolve(from("127.0.0.1", "Forwarded", "for=198.51.100.1, for=10.1.1.1;proto=http , for=10.2.2.2")))
                .isEqualTo("ip~198.51.100.1");
        // A quoted comma or semicolon does not split: the element is one garbage node.
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=\"_x,for=198.51.100.5\""))).isEqualTo("ip~127.0.0.1");
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=\"_x;for=198.51.100.5\""))).isEqualTo("ip~127.0.0.1");
        // An element the proxy wrote without for=, or malformed, names nobody.
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=198.51.100.4, proto=https")))
                .isEqualTo("ip~127.0.0.1");
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=198.51.100.4, for=\"203.0.113.1")))
                .isEqualTo("ip~127.0.0.1");
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=198.51.100.4, for=1.1.1.1;for=2.2.2.2")))
                .isEqualTo("ip~127.0.0.1");
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=198.51.100.4, for"))).isEqualTo("ip~127.0.0.1");
    }

    @Test
    void unknownAndObfuscatedHopsMakeTheProxyThatWroteThemTheCaller() {
        CallerResolver forwarded = resolver("ip", "127.0.0.1, 10.0.0.0/8", "forwarded", "64");
        CallerResolver xff = resolver("ip", "127.0.0.1, 10.0.0.0/8");
        for (String hidden : List.of("unknown", "UNKNOWN", "_hidden", "\"_abc\"", "\"[_abc]\"", "example.com",
                "\"\"")) {
            assertThat(forwarded.resolve(from("127.0.0.1", "Forwarded", "for=198.51.100.1, for=" + hidden)))
                    .as(hidden).isEqualTo("ip~127.0.0.1");
            // Written by the trusted proxy 10.1.1.1 (the hop to its right): that proxy pays, never the client's guess.
            assertThat(
                    forwarded.resolve(from("127.0.0.1", "Forwarded",
                    "for=198.51.100.1, for=" + hidden + ", for=10.1.1.1")))
                    .as(hidden).isEqualTo("ip~10.1.1.1");
        }
        for (String hidden : List.of("unknown", "_hidden", "", "example.com", "1.2.3.4:", "1.2.3.4:http", "[::1",
                "999.1.1.1", "1.2.3", "١.٢.٣.٤")) {
            assertThat(xff.resolve(from("127.0.0.1", "X-Forwarded-For", "198.51.100.1, " + hidden)))
                    .as(hidden).isEqualTo("ip~127.0.0.1");
            assertThat(xff.resolve(from("127.0.0.1", "X-Forwarded-For", "198.51.100.1, " + hidden + ", 10.1.1.1")))
                    .as(hidden).isEqualTo("ip~10.1.1.1");
        }
        // An identifiable client right of the garbage is still the client.
        assertThat(xff.resolve(from("127.0.0.1", "X-Forwarded-For", "unknown, 203.0.113.9")))
                .isEqualTo("ip~203.0.113.9");
    }

    @Test
    void ipv6ClientsAreKeyedByTheirPrefixAndNormalised() {
        CallerResolver r = resolver("ip", "127.0.0.1");
        for (String form : List.of("2001:db8:1:2::1", "2001:DB8:1:2:FFFF:FFFF:FFFF:FFFF", "[2001:db8:1:2::9]:443",
                "2001:0db8:0001:0002:0000:0000:0000:0001", "2001:db8:1:2::1%eth0", "[2001:db8:1:2:a:b:1.2.3.4]")) {
            assertThat(r.resolve(from("127.0.0.1", "X-Forwarded-For", form))).as(form)
                    .isEqualTo("ip~2001:db8:1:2::/64");
        }
        assertThat(r.resolve(from("127.0.0.1", "X-Forwarded-For", "2001:db8:1:3::1")))
                .isEqualTo("ip~2001:db8:1:3::/64");
        assertThat(resolver("ip", "127.0.0.1", "x-forwarded-for", "56")
                .resolve(from("127.0.0.1", "X-Forwarded-For", "2001:db8:1:2ff::1")))
                .isEqualTo("ip~2001:db8:1:200::/56");
        assertThat(resolver("ip", "127.0.0.1", "x-forwarded-for", "35")
                .resolve(from("127.0.0.1", "X-Forwarded-For", "2001:db8:ffff::1"))).isEqualTo("ip~2001:db8:e000::/35");
        CallerResolver exact = resolver("ip", "", "x-forwarded-for", "128");
        assertThat(exact.resolve(from("0:0:0:0:0:0:0:1"))).isEqualTo("ip~::1");
        assertThat(exact.resolve(from("FE80:0:0:0:0:0:0:1%eth0"))).isEqualTo("ip~fe80::1");
        assertThat(exact.resolve(from("2001:db8:0:0:1:0:0:1"))).isEqualTo("ip~2001:db8::1:0:0:1");
        assertThat(exact.resolve(from("2001:0:0:1:0:0:0:1"))).isEqualTo("ip~2001:0:0:1::1");
        // IPv4 clients stay per address whatever the prefix.
        assertThat(r.resolve(from("192.0.2.7"))).isEqualTo("ip~192.0.2.7");
        // The peer is normalised before it is matched against the trusted proxies.
        assertThat(resolver("ip", "::1").resolve(from("0:0:0:0:0:0:0:1", "X-Forwarded-For", "192.0.2.8")))
                .isEqualTo("ip~192.0.2.8");
        assertThat(resolver("ip", "127.0.0.1").resolve(from("::ffff:127.0.0.1", "X-Forwarded-For", "192.0.2.8")))
                .isEqualTo("ip~192.0.2.8");
        // A runtime that cannot tell the peer: what it said, as before.
        assertThat(r.resolve(from("unknown"))).isEqualTo("ip~unknown");
    }

    @Test
    void addressLiteralsAreParsedWithoutDnsAndStrictly() {
        for (String bad : List.of("localhost", "example.com", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1..2.3", "1.2.3.4 ",
                ":::", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::1", "::1%", ":1::", "1::2:", "g::1", "1.2.3.4%eth0",
                "::1.2.3", "1:2:3:4:5:6:7:1.2.3.4", "[::1", "１.２.３.４", "")) {
            assertThat(IpLiteral.parse(bad)).as(bad).isNull();
        }
        assertThat(IpLiteral.format(IpLiteral.parse("::"))).isEqualTo("::");
        assertThat(IpLiteral.format(IpLiteral.parse("1::"))).isEqualTo("1::");
        assertThat(IpLiteral.format(IpLiteral.parse("1:2:3:4:5:6:7::"))).isEqualTo("1:2:3:4:5:6:7:0");
        assertThat(IpLiteral.format(IpLiteral.parse("1:2:3:4:5:6::8"))).isEqualTo("1:2:3:4:5:6:0:8");
        assertThat(IpLiteral.format(IpLiteral.parse("::2:3:4:5:6:7:8"))).isEqualTo("0:2:3:4:5:6:7:8");
        assertThat(IpLiteral.format(IpLiteral.parse("1:0:0:2:0:0:0:3"))).isEqualTo("1:0:0:2::3");
        assertThat(IpLiteral.format(IpLiteral.parse("::ffff:10.0.0.1"))).isEqualTo("10.0.0.1");
        assertThat(IpLiteral.format(IpLiteral.parse("::10.0.0.1"))).isEqualTo("::a00:1");
        assertThat(IpLiteral.format(IpLiteral.parse("[2001:DB8::A]"))).isEqualTo("2001:db8::a");
        // Trusted proxies may be written as IPv4-mapped networks, and match IPv4 peers.
        assertThat(WebSettings.DEFAULTS.withTrustedProxies("::ffff:10.0.0.0/104").callers().trustedProxies())
                .extracting(Cidr::toString).containsExactly("10.0.0.0/8");
    }

    private static int ipv6Prefix(String value) {
        return WebSettings.parse(Map.of("ipv6-prefix", value)::get).callers().ipv6Prefix();
    }

    @Test
    void forwardedHeaderAndIpv6PrefixAreValidatedByTheOneParser() {
        assertThat(ForwardedHeader.parse(" Forwarded ")).isEqualTo(ForwardedHeader.FORWARDED);
        assertThat(ipv6Prefix("48")).isEqualTo(48);
        assertThatThrownBy(() -> ForwardedHeader.parse("x-real-ip"))
                .hasMessage("'forwarded-header' must be x-forwarded-for or forwarded, got 'x-real-ip'");
        for (String bad : List.of("31", "129", "0", "-64", "+64", "64.0", "0x40", "sixty-four", "99999999999")) {
            assertThatThrownBy(() -> ipv6Prefix(bad))
                    .hasMessage("'ipv6-prefix' must be an integer from 32 to 128, got '" + bad + "'");
        }
        assertThatThrownBy(() -> new CallerRules(List.of(), ForwardedHeader.FORWARDED, 16, List.of(), null))
                .hasMessage("'ipv6-prefix' must be an integer from 32 to 128, got '16'");
    }

    @Test
    void hostileIdentitiesBecomeBoundedTagsThatCannotPickASlot() {
        for (String hostile : List.of("a".repeat(8_192), "{slot}", "x\r\nSET k v", "\u0000\u00ff", "ip~1.2.3.4:80")) {
            String tag = Keys.tag(hostile);
            assertThat(tag).startsWith("#").hasSize(23).doesNotContain("{", "}", "\r", "\n", ":");
        }
        assertThat(Keys.tag("key~abc-123")).isEqualTo("key~abc-123");
        assertThat(Keys.tag("a")).isNotEqualTo(Keys.tag("b"));
    }
}
