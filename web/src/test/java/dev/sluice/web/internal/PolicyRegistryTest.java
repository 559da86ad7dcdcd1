package dev.sluice.web.internal;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.PolicyView;
import dev.sluice.web.RequestView;
import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The registry on the memory store: one JVM. Over HTTP and on Redis, see the servlet filter's tests. */
class PolicyRegistryTest {

    private final List<Runnable> cleanUp = new ArrayList<>();

    @AfterEach
    void stop() {
        cleanUp.forEach(Runnable::run);
    }

    /** A request from {@code address} with {@code headers}. */
    private static RequestView from(String address, String... headers) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < headers.length; i += 2) {
            map.put(headers[i], headers[i + 1]);
        }
        Map<String, Object> attributes = new HashMap<>();
        return new RequestView() {
            @Override
            public String header(String name) {
                return map.get(name);
            }

            @Override
            public List<String> headers(String name) {
                return map.containsKey(name) ? List.of(map.get(name)) : List.of();
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
            public String remoteAddr() {
                return address;
            }

            @Override
            public Object attribute(String name) {
                return attributes.get(name);
            }

            @Override
            public void setAttribute(String name, Object value) {
                attributes.put(name, value);
            }
        };
    }

    private ApplicationPolicies registry(Guard guard, RateLimitStore store) {
        ApplicationPolicies registry = new ApplicationPolicies();
        registry.register(guard, store, "memory");
        cleanUp.add(() -> registry.unregister(guard));
        return registry;
    }

    private static Guard guard(RateLimitStore store, String policy, String limit, String key, WebSettings web) {
        return Guard.of(List.of(RouteSpec.of(policy, Algorithm.TOKEN_BUCKET, limit, 0, 1, key, FailureMode.OPEN)), web,
                store, "filter '" + policy + "'");
    }

    @Test
    void resetBuildsTheIdentityTheRouteBuildsAnIpv6NetworkACompositeAndGlobalAndLetsTheCallerIn() {
        MemoryStore store = MemoryStore.create();
        Guard byNetwork = guard(store, "net", "1/1h", "ip", WebSettings.DEFAULTS.withIpv6Prefix(56));
        Guard byBoth = guard(store, "both", "1/1h", "ip+header:X-API-Key", WebSettings.DEFAULTS);
        Guard global = guard(store, "all", "1/1h", "global", WebSettings.DEFAULTS);
        ApplicationPolicies registry = new ApplicationPolicies();
        for (Guard guard : List.of(byNetwork, byBoth, global)) {
            registry.register(guard, store, "memory");
            cleanUp.add(() -> registry.unregister(guard));
        }
        RequestView v6 = from("2001:db8:1:2ff::9");
        RequestView keyed = from("192.0.2.1", "X-API-Key", "alice");
        assertThat(byNetwork.check(v6).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(byNetwork.check(v6).status()).isEqualTo(429);
        assertThat(byBoth.check(keyed).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(byBoth.check(keyed).status()).isEqualTo(429);
        assertThat(global.check(keyed).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(global.check(v6).status()).isEqualTo(429);

        // Another address of the same /56, written another way, as a client would send it.
        assertThat(registry.reset("net", "2001:DB8:1:200:0:0:0:1")).containsExactly("ip~2001:db8:1:200::/56");
        assertThat(byNetwork.check(v6).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(registry.reset("both", " 192.0.2.1+alice ")).containsExactly("all~12:ip~192.0.2.1|9:key~alice|");
        assertThat(byBoth.check(keyed).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(registry.reset("all", "anything")).containsExactly("global~");
        assertThat(global.check(v6).status()).isEqualTo(HttpAnswer.PROCEED);

        assertThatThrownBy(() -> registry.reset("both", "alice"))
                .hasMessage("caller 'alice' fits none of the key sources of policy 'both' (key ip+header:X-API-Key)");
        assertThatThrownBy(() -> registry.reset("net", "not-an-address"))
                .hasMessageContaining("fits none of the key sources of policy 'net'");
        assertThatThrownBy(() -> registry.reset("nope", "192.0.2.1"))
                .hasMessage("no policy 'nope' in this application");
    }

    @Test
    void aCompositeCallerWhosePartsHoldAPlusIsResetUnderEveryWayItSplits() {
        MemoryStore store = MemoryStore.create();
        Guard keyAndIp = guard(store, "pair", "1/1h", "header:X-API-Key+ip", WebSettings.DEFAULTS);
        Guard twoKeys = guard(store, "keys", "1/1h", "header:A+header:B", WebSettings.DEFAULTS);
        ApplicationPolicies registry = new ApplicationPolicies();
        for (Guard guard : List.of(keyAndIp, twoKeys)) {
            registry.register(guard, store, "memory");
            cleanUp.add(() -> registry.unregister(guard));
        }
        RequestView base64 = from("192.0.2.1", "X-API-Key", "ab+cd==");
        assertThat(keyAndIp.check(base64).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(keyAndIp.check(base64).status()).isEqualTo(429);
        // Only one split has an address where ip is.
        assertThat(registry.reset("pair", "ab+cd==+192.0.2.1")).containsExactly("all~11:key~ab+cd==|12:ip~192.0.2.1|");
        assertThat(keyAndIp.check(base64).status()).isEqualTo(HttpAnswer.PROCEED);

        RequestView pair = from("192.0.2.1", "A", "x+y", "B", "z");
        assertThat(twoKeys.check(pair).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(twoKeys.check(pair).status()).isEqualTo(429);
        // Ambiguous: both ways are the caller's possible identities, and both are reset.
        assertThat(registry.reset("keys", "x+y+z")).containsExactly("all~5:key~x|7:key~y+z|", "all~7:key~x+y|5:key~z|");
        assertThat(twoKeys.check(pair).status()).isEqualTo(HttpAnswer.PROCEED);

        // Too many ways to split (over 256) is none: the caller fits no key source.
        assertThatThrownBy(() -> registry.reset("keys", "a" + "+a".repeat(300)))
                .hasMessageContaining("fits none of the key sources of policy 'keys'");
    }

    @Test
    void aBadOverrideIsRefusedWithTheParametersMessageAndChangesNothing() {
        MemoryStore store = MemoryStore.create();
        Guard guard = guard(store, "api", "2/1m", "ip", WebSettings.DEFAULTS);
        ApplicationPolicies registry = registry(guard, store);

        assertThatThrownBy(() -> registry.override("api", "100/minutes", null, "alice"))
                .hasMessage("'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'");
        assertThatThrownBy(() -> registry.override("api", "10/1m", "0", "alice"))
                .hasMessage("'burst' must be an integer of at least 1, got '0'");
        // The same messages as the parameters give at start-up.
        assertThatThrownBy(() -> RouteSpec.parse(Map.of("limit", "100/minutes")::get, "x"))
                .hasMessage("'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'");
        assertThat(store.overrides().toCompletableFuture().join()).isEmpty();
        PolicyView view = registry.policy("api").orElseThrow();
        assertThat(view.override()).isNull();
        assertThat(view.effective()).isEqualTo(view.configured());
        assertThat(guard.check(from("192.0.2.1")).headers()).contains(new HttpAnswer.Header("RateLimit-Limit", "2"));
    }

    @Test
    void anOverrideDecidesAtOnceCarriesWhatWasUsedOverAndClearingReverts() {
        MemoryStore store = MemoryStore.create();
        Guard guard = guard(store, "api", "2/1m", "ip", WebSettings.DEFAULTS);
        ApplicationPolicies registry = registry(guard, store);
        // a request carries its layers: one each
        java.util.function.Supplier<RequestView> caller = () -> from("192.0.2.1");
        assertThat(guard.check(caller.get()).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(guard.check(caller.get()).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(guard.check(caller.get()).status()).isEqualTo(429);

        registry.override("api", "5/1m", "5", "alice");
        PolicyView view = registry.policy("api").orElseThrow();
        assertThat(view.effective().count()).isEqualTo(5);
        assertThat(view.configured().count()).isEqualTo(2);
        assertThat(view.override().limit()).isEqualTo("5/1m");
        assertThat(view.override().burst()).isEqualTo("5");
        assertThat(view.override().by()).isEqualTo("alice");
        assertThat(view.override().at()).isNotNull();
        // The two used carry over: three more, not five.
        for (int i = 0; i < 3; i++) {
            HttpAnswer answer = guard.check(caller.get());
            assertThat(answer.status()).as("request %d", i).isEqualTo(HttpAnswer.PROCEED);
            assertThat(answer.headers()).contains(new HttpAnswer.Header("RateLimit-Limit", "5"));
        }
        assertThat(guard.check(caller.get()).status()).isEqualTo(429);

        registry.clearOverride("api", "bob");
        assertThat(store.overrides().toCompletableFuture().join()).isEmpty();
        assertThat(registry.policy("api").orElseThrow().override()).isNull();
        HttpAnswer reverted = guard.check(from("192.0.2.2"));
        assertThat(reverted.headers()).contains(new HttpAnswer.Header("RateLimit-Limit", "2"));
        assertThat(registry.policy("api").orElseThrow().counts()).containsEntry("allowed", 6L)
                .containsEntry("rejected", 2L);
    }

    @Test
    void anotherApplicationOnTheSameMemoryStoreAppliesTheOverrideOnItsNextRefresh() {
        MemoryStore store = MemoryStore.create();
        Guard one = guard(store, "api", "2/1m", "ip", WebSettings.DEFAULTS);
        Guard two = guard(store, "api", "2/1m", "ip", WebSettings.DEFAULTS);
        ApplicationPolicies first = registry(one, store);
        ApplicationPolicies second = registry(two, store);
        first.override("api", "7/1m", null, "alice");
        second.refresh();
        assertThat(second.policy("api").orElseThrow().effective().count()).isEqualTo(7);
        assertThat(two.check(from("192.0.2.9")).headers()).contains(new HttpAnswer.Header("RateLimit-Limit", "7"));
        first.clearOverride("api", "alice");
        second.refresh();
        assertThat(two.check(from("192.0.2.9")).headers()).contains(new HttpAnswer.Header("RateLimit-Limit", "2"));
    }
}
