package dev.sluice.web.internal;

import dev.sluice.memory.MemoryStore;
import dev.sluice.web.RequestView;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A guard finds a request's client address at most once, however many of its rules need it: the
 * {@code exempt} networks and an {@code ip} key source read the one address found.
 */
class ClientAddressOnceTest {

    /** A request that counts how often the socket peer and the forwarding header are read. */
    private static final class CountingRequest implements RequestView {
        private final String peer;
        private final Map<String, List<String>> headers;
        int peerReads;
        int forwardedReads;

        CountingRequest(String peer, Map<String, List<String>> headers) {
            this.peer = peer;
            this.headers = headers;
        }

        @Override
        public String remoteAddr() {
            peerReads++;
            return peer;
        }

        @Override
        public String header(String name) {
            List<String> values = headers(name);
            return values.isEmpty() ? null : values.get(0);
        }

        @Override
        public List<String> headers(String name) {
            if (name.equalsIgnoreCase("X-Forwarded-For")) {
                forwardedReads++;
            }
            return headers.getOrDefault(name, List.of());
        }

        @Override
        public String principal() {
            return null;
        }

        @Override
        public String param(String name) {
            return null;
        }

        @Override
        public Object attribute(String name) {
            return null;
        }

        @Override
        public void setAttribute(String name, Object value) {
        }
    }

    private static Guard guard(String... pairs) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            values.put(pairs[i], pairs[i + 1]);
        }
        values.putIfAbsent("limit", "5/1h");
        return Guard.of(List.of(RouteSpec.parse(values::get, "p")), WebSettings.parse(values::get),
                MemoryStore.create(), "filter 'once'");
    }

    @Test
    void withExemptNetworksTheClientAddressIsResolvedOncePerRequest() {
        Guard guard = guard("key", "ip", "exempt", "10.0.0.0/8");
        CountingRequest request = new CountingRequest("192.0.2.1", Map.of());

        HttpAnswer answer = guard.check(request);

        assertThat(answer.status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(answer.headers()).isNotEmpty(); // decided, not exempt: rate-limit headers
        assertThat(request.peerReads).as("socket peer reads of one request").isEqualTo(1);
    }

    @Test
    void throughATrustedProxyTheForwardingHeaderIsWalkedOncePerRequest() {
        Guard guard = guard("key", "header:X-API-Key,ip", "exempt", "10.0.0.0/8", "trusted-proxies", "127.0.0.1");
        CountingRequest request = new CountingRequest("127.0.0.1", Map.of("X-Forwarded-For", List.of("198.51.100.7")));

        HttpAnswer answer = guard.check(request);

        assertThat(answer.headers()).isNotEmpty();
        assertThat(request.peerReads).as("socket peer reads of one request").isEqualTo(1);
        assertThat(request.forwardedReads).as("X-Forwarded-For reads of one request").isEqualTo(1);
    }

    @Test
    void anExemptClientBehindATrustedProxyIsFoundWithOneResolution() {
        Guard guard = guard("key", "ip", "exempt", "198.51.100.0/24", "trusted-proxies", "127.0.0.1");
        CountingRequest request = new CountingRequest("127.0.0.1", Map.of("X-Forwarded-For", List.of("198.51.100.7")));

        HttpAnswer answer = guard.check(request);

        assertThat(answer.status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(answer.headers()).isEmpty(); // exempt: not decided, no rate-limit headers
        assertThat(request.peerReads).isEqualTo(1);
        assertThat(request.forwardedReads).isEqualTo(1);
    }
}
