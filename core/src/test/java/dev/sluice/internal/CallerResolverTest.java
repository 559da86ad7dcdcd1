package dev.sluice.internal;

import dev.sluice.SluiceConfig;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

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
    }

    private static Request from(String peer, String... headerPairs) {
        Map<String, List<String>> headers = new HashMap<>();
        for (int i = 0; i < headerPairs.length; i += 2) {
            headers.put(headerPairs[i], List.of(headerPairs[i + 1]));
        }
        return new Request(peer, headers, Map.of("key", "p-123"), null);
    }

    private static CallerResolver resolver(String key, String trusted) {
        return new CallerResolver(SluiceConfig.parseKeySources(key), SluiceConfig.parseTrustedProxies(trusted));
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
        assertThat(resolver("ip", "").resolve(from("192.0.2.7", "X-Forwarded-For", "203.0.113.9"))).isEqualTo("ip~192.0.2.7");
    }

    @Test
    void throughTrustedProxiesTheRightmostUntrustedHopIsTheClient() {
        CallerResolver r = resolver("ip", "10.0.0.0/8, 127.0.0.1");
        // the client may prepend anything; only what trusted proxies appended counts
        assertThat(r.resolve(from("10.0.0.5", "X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.1.1.1")))
                .isEqualTo("ip~203.0.113.9");
        assertThat(r.resolve(from("127.0.0.1", "Forwarded", "for=\"[2001:db8::1]:4711\";proto=https")))
                .isEqualTo("ip~2001:db8::1");
        assertThat(r.resolve(from("127.0.0.1", "X-Forwarded-For", "garbage, 203.0.113.9"))).isEqualTo("ip~203.0.113.9");
        assertThat(r.resolve(from("127.0.0.1", "X-Forwarded-For", "203.0.113.9, garbage"))).isEqualTo("ip~127.0.0.1");
        assertThat(r.resolve(from("127.0.0.1", "X-Forwarded-For", "10.2.2.2"))).isEqualTo("ip~127.0.0.1");
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
