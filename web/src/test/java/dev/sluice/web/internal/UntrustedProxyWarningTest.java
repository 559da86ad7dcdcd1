package dev.sluice.web.internal;

import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.LogCapture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A forwarding header from a loopback or private peer that is not a trusted proxy is logged once
 * per guard, naming {@code trusted-proxies}; decisions are not changed by it.
 */
class UntrustedProxyWarningTest {

    private static final Pattern WARNING = Pattern.compile("WARN .*'trusted-proxies'");

    /** The guard of a filter named {@code where}, configured by init-params {@code name, value, ...}. */
    private static Guard guard(String where, String... pairs) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            values.put(pairs[i], pairs[i + 1]);
        }
        values.putIfAbsent("limit", "2/1h");
        return Guard.of(List.of(RouteSpec.parse(values::get, "p")), WebSettings.parse(values::get),
                MemoryStore.create(), where);
    }

    private static CallerResolverTest.Request from(String peer, String... headerPairs) {
        Map<String, List<String>> headers = new HashMap<>();
        for (int i = 0; i < headerPairs.length; i += 2) {
            headers.computeIfAbsent(headerPairs[i], k -> new ArrayList<>()).add(headerPairs[i + 1]);
        }
        return new CallerResolverTest.Request(peer, headers, Map.of(), null);
    }

    private static int warnings(String log) {
        Matcher found = WARNING.matcher(log);
        int count = 0;
        while (found.find()) {
            count++;
        }
        return count;
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "10.1.2.3", "172.16.0.9", "172.31.255.1", "192.168.1.1", "169.254.0.5", "::1",
            "fd00::5", "fc12::1", "fe80::1", "::ffff:10.0.0.1"})
    void aForwardingHeaderFromAnUntrustedPrivatePeerIsLoggedOnceAndChangesNothing(String peer) {
        Guard guard = guard("filter 'lb'");
        String log;
        try (LogCapture capture = LogCapture.start()) {
            // Three clients behind one balancer: one budget of 2, as before the warning existed.
            assertThat(guard.check(from(peer, "X-Forwarded-For", "198.51.100.1")).status())
                    .isEqualTo(HttpAnswer.PROCEED);
            assertThat(guard.check(from(peer, "X-Forwarded-For", "198.51.100.2")).status())
                    .isEqualTo(HttpAnswer.PROCEED);
            assertThat(guard.check(from(peer, "Forwarded", "for=198.51.100.3")).status()).isEqualTo(429);
            for (int i = 0; i < 5; i++) {
                guard.check(from(peer, "X-Forwarded-For", "198.51.100.9"));
            }
            log = capture.text();
        }
        assertThat(warnings(log)).as(log).isEqualTo(1);
        assertThat(log).contains("filter 'lb': a request from ").contains(" carries X-Forwarded-For")
                .contains("set 'trusted-proxies'");
    }

    @Test
    void theRfc7239HeaderIsNamedToo() {
        Guard guard = guard("filter 'lb'");
        try (LogCapture capture = LogCapture.start()) {
            guard.check(from("10.0.0.7", "Forwarded", "for=198.51.100.3"));
            assertThat(capture.text()).contains("filter 'lb': a request from 10.0.0.7 carries Forwarded");
        }
    }

    @Test
    void nothingIsLoggedWhereTheHeaderIsNoSign() {
        try (LogCapture capture = LogCapture.start()) {
            // A public peer: a client's own header, or a proxy that is not yours.
            guard("filter 'a'").check(from("203.0.113.9", "X-Forwarded-For", "198.51.100.1"));
            guard("filter 'b'").check(from("2001:db8::1", "X-Forwarded-For", "198.51.100.1"));
            // A private peer without a forwarding header.
            guard("filter 'c'").check(from("10.0.0.7"));
            // A trusted proxy: the header is believed.
            guard("filter 'd'", "trusted-proxies", "10.0.0.0/8")
                    .check(from("10.0.0.7", "X-Forwarded-For", "198.51.100.1"));
            // A key that never reads the address.
            guard("filter 'e'", "key", "header:X-Client").check(from("10.0.0.7", "X-Forwarded-For", "198.51.100.1",
                    "X-Client", "c"));
            // A trusted proxy list that misses this peer still warns: next test. Here, none warned.
            assertThat(warnings(capture.text())).as(capture.text()).isZero();
        }
    }

    @Test
    void aPrivatePeerOutsideANonEmptyTrustedListIsNamedToo() {
        Guard guard = guard("filter 'lb'", "trusted-proxies", "192.168.0.0/16");
        try (LogCapture capture = LogCapture.start()) {
            guard.check(from("10.0.0.7", "X-Forwarded-For", "198.51.100.1"));
            assertThat(warnings(capture.text())).isEqualTo(1);
            assertThat(capture.text()).contains("10.0.0.7 is not in 'trusted-proxies'");
        }
    }
}
