package dev.sluice.web.internal;

import dev.sluice.memory.MemoryStore;
import dev.sluice.web.RequestView;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A guard finds a request's client address at most once, however many of its rules need it: the
 * {@code exempt} networks and an {@code ip} key source read the one address found.
 */
class ClientAddressOnceTest {

    /** Counts the calls to each method of a request, by name. */
    private final Map<String, Integer> reads = new HashMap<>();

    /** A request from {@code peer} with {@code headers}, whose every call is counted in {@link #reads}. */
    private RequestView counted(String peer, Map<String, List<String>> headers) {
        RequestView request = new CallerResolverTest.Request(peer, headers, Map.of(), null);
        return (RequestView) Proxy.newProxyInstance(RequestView.class.getClassLoader(),
                new Class<?>[] {RequestView.class},
                (proxy, method, args) -> {
                    String name = method.getName() + (args != null && args.length == 1 ? " " + args[0] : "");
                    reads.merge(name, 1, Integer::sum);
                    try {
                        return method.invoke(request, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private int peerReads() {
        return reads.getOrDefault("remoteAddr", 0);
    }

    private int forwardedReads() {
        return reads.getOrDefault("headers X-Forwarded-For", 0);
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
        RequestView request = counted("192.0.2.1", Map.of());

        HttpAnswer answer = guard.check(request);

        assertThat(answer.status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(answer.headers()).isNotEmpty(); // decided, not exempt: rate-limit headers
        assertThat(peerReads()).as("socket peer reads of one request").isEqualTo(1);
    }

    @Test
    void throughATrustedProxyTheForwardingHeaderIsWalkedOncePerRequest() {
        Guard guard = guard("key", "header:X-API-Key,ip", "exempt", "10.0.0.0/8", "trusted-proxies", "127.0.0.1");
        RequestView request = counted("127.0.0.1", Map.of("X-Forwarded-For", List.of("198.51.100.7")));

        HttpAnswer answer = guard.check(request);

        assertThat(answer.headers()).isNotEmpty();
        assertThat(peerReads()).as("socket peer reads of one request").isEqualTo(1);
        assertThat(forwardedReads()).as("X-Forwarded-For reads of one request").isEqualTo(1);
    }

    @Test
    void anExemptClientBehindATrustedProxyIsFoundWithOneResolution() {
        Guard guard = guard("key", "ip", "exempt", "198.51.100.0/24", "trusted-proxies", "127.0.0.1");
        RequestView request = counted("127.0.0.1", Map.of("X-Forwarded-For", List.of("198.51.100.7")));

        HttpAnswer answer = guard.check(request);

        assertThat(answer.status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(answer.headers()).isEmpty(); // exempt: not decided, no rate-limit headers
        assertThat(peerReads()).isEqualTo(1);
        assertThat(forwardedReads()).isEqualTo(1);
    }
}
