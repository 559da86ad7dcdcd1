package dev.sluice.web.internal;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Composite keys are injective: no values a client sends make two different tuples of parts one caller. */
class CompositeKeyTest {

    private static CallerResolver resolver(String key) {
        return new CallerResolver(KeySource.parseList(key), WebSettings.DEFAULTS);
    }

    private static CallerResolverTest.Request request(String a, String b) {
        Map<String, List<String>> headers = new HashMap<>();
        if (a != null) {
            headers.put("A", List.of(a));
        }
        if (b != null) {
            headers.put("B", List.of(b));
        }
        return new CallerResolverTest.Request("192.0.2.1", headers, Map.of(), null);
    }

    /** Every concatenation of up to {@code max} tokens. */
    private static List<String> words(List<String> tokens, int max) {
        List<String> words = new ArrayList<>(tokens);
        List<String> last = tokens;
        for (int n = 2; n <= max; n++) {
            List<String> longer = new ArrayList<>();
            for (String word : last) {
                for (String token : tokens) {
                    longer.add(word + token);
                }
            }
            words.addAll(longer);
            last = longer;
        }
        return words;
    }

    @Test
    void partsChosenToConfuseTheEncodingNeverCollide() {
        // Tokens of the encoding itself and of naive ones (separators, prefixes, length prefixes).
        List<String> tokens = List.of("x", "y", "|", ":", "+", "1", "9", "key~", "|key~", "all~", "1:", "9:key~");
        CallerResolver resolver = resolver("header:A+header:B");
        Map<String, String> seen = new HashMap<>();
        for (String a : words(tokens, 3)) {
            for (String b : words(tokens, 2)) {
                String tuple = List.of(a, b).toString();
                String before = seen.putIfAbsent(resolver.resolve(request(a, b)), tuple);
                assertThat(before == null || before.equals(tuple)).as("(%s) and (%s) are one caller", before, tuple)
                        .isTrue();
            }
        }
        assertThat(seen).hasSize(words(tokens, 3).stream().distinct().toList().size()
                * words(tokens, 2).stream().distinct().toList().size());
    }

    @Test
    void aMissingPartFallsToTheNextAlternativeAndCompositesNeverPoseAsSingles() {
        CallerResolver resolver = resolver("header:A+header:B,header:A,ip");
        assertThat(resolver.resolve(request("alice", "bob"))).isEqualTo("all~9:key~alice|7:key~bob|");
        assertThat(resolver.resolve(request("alice", null))).isEqualTo("key~alice");
        assertThat(resolver.resolve(request("alice", " "))).isEqualTo("key~alice");
        assertThat(resolver.resolve(request(null, "bob"))).isEqualTo("ip~192.0.2.1");
        // A single value spelling a composite identity is still a single one: key~ prefixed.
        assertThat(resolver.resolve(request("all~9:key~alice|7:key~bob|", null))).startsWith("key~");
        Set<String> ids =
                new HashSet<>(List.of(resolver.resolve(request("a", "b")), resolver.resolve(request("a|1:b", null))));
        assertThat(ids).hasSize(2);
    }

    @Test
    void ipPartsUseTheClientAddressAndGlobalIsOneCaller() {
        CallerResolver resolver = new CallerResolver(KeySource.parseList("ip+header:A"),
                CallerRules.NONE.withTrustedProxies("127.0.0.1/32"));
        Map<String, List<String>> headers = Map.of("A", List.of("alice"), "X-Forwarded-For", List.of("203.0.113.9"));
        assertThat(resolver.resolve(new CallerResolverTest.Request("127.0.0.1", headers, Map.of(), null)))
                .isEqualTo("all~14:ip~203.0.113.9|9:key~alice|");
        CallerResolver global = resolver("global");
        assertThat(global.resolve(request("alice", null))).isEqualTo(global.resolve(request(null, "bob")))
                .isEqualTo("global~");
    }
}
