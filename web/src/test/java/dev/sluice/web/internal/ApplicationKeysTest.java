package dev.sluice.web.internal;

import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Callers named by the application's own identity: {@code key=attribute:NAME} (a request attribute
 * its authentication set) and a {@link KeyResolver}; and a {@link LimitResolver}'s limiters keep
 * the listener of the limiter they stand beside.
 */
class ApplicationKeysTest {

    private static TestRequest tenant(Object tenant) {
        TestRequest request = new TestRequest();
        if (tenant != null) {
            request.setAttribute("tenant", tenant);
        }
        return request;
    }

    @Test
    void anAttributeKeysTheCallerAloneOrAsAPartOfAComposite() {
        CallerResolver resolver = new CallerResolver(KeySource.parseList("attribute:tenant+ip, attribute:tenant, ip"),
                WebSettings.DEFAULTS);
        assertThat(resolver.resolve(tenant("acme"))).isEqualTo("all~9:attr~acme|12:ip~192.0.2.1|");
        assertThat(new CallerResolver(KeySource.parseList("attribute:tenant,ip"), WebSettings.DEFAULTS)
                .resolve(tenant(42L))).isEqualTo("attr~42");
        assertThat(resolver.resolve(tenant(null))).isEqualTo("ip~192.0.2.1");
        assertThat(resolver.resolve(tenant(" "))).isEqualTo("ip~192.0.2.1");
        // An attribute is the application's word, not the client's: apart from a header of the same text.
        assertThat(new CallerResolver(KeySource.parseList("header:X-Tenant"), WebSettings.DEFAULTS)
                .resolve(new CallerResolverTest.Request("192.0.2.1", java.util.Map.of("X-Tenant", List.of("acme")),
                        java.util.Map.of(), null))).isEqualTo("key~acme");
        assertThat(KeySource.format(KeySource.parseList("attribute:tenant+ip"))).isEqualTo("attribute:tenant+ip");
    }

    @Test
    void aBadAttributeNameIsRefusedNamingTheKey() {
        assertThatThrownBy(() -> KeySource.parseList("attribute:"))
                .hasMessage(
                        "'key' must be a comma-separated list of header:NAME, principal, param:NAME, attribute:NAME "
                        + "or ip (or of several joined by +, or global alone), got 'attribute:'");
    }

    @Test
    void aKeyResolverNamesTheCallerAndLeavesTheRestToTheKeySources() {
        RouteSpec route = RouteSpec.of("per-account", Algorithm.TOKEN_BUCKET, "1/1m", 0, 1, "ip", FailureMode.OPEN);
        Guard guard = Guard.of(List.of(route), WebSettings.DEFAULTS, MemoryStore.create(), "test")
                .withKeyResolver(request -> request.attribute("account") instanceof String account ? account : null);
        TestRequest alice = new TestRequest();
        alice.setAttribute("account", "alice");
        TestRequest bob = new TestRequest();
        bob.setAttribute("account", "bob");
        assertThat(guard.check(alice).proceeds()).isTrue();
        assertThat(guard.check(bob).proceeds()).as("another account, the same address").isTrue();
        assertThat(guard.check(alice).status()).isEqualTo(429);
        // No account: the key sources (ip), a caller of its own, not alice's.
        assertThat(guard.check(new TestRequest()).proceeds()).isTrue();
        assertThat(guard.check(new TestRequest()).status()).isEqualTo(429);
    }

    @Test
    void aLimitResolversLimitersKeepTheListenerOfTheLimiterGivenInJava() {
        List<String> heard = new CopyOnWriteArrayList<>();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("base", "10/1m")).store(MemoryStore.create())
                .listener((Decision decision, long nanos) -> heard.add(decision.binding().limit().policy())).build();
        List<Limit> gold = List.of(Limit.of("base.gold", "100/1m"));
        Guard guard = new Guard(limiter, KeySource.IP, WebSettings.DEFAULTS, "test")
                .withLimitResolver(request -> request.attribute("plan") == null ? null : gold);
        guard.check(new TestRequest());
        TestRequest goldRequest = new TestRequest();
        goldRequest.setAttribute("plan", "gold");
        guard.check(goldRequest);
        assertThat(heard).containsExactly("base", "base.gold");
    }
}
