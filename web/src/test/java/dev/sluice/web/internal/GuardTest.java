package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A guard turns a request into the answer both adapters write; over HTTP, see the adapters' tests. */
class GuardTest {

    private static RouteSpec route(String policy, String limit, String key) {
        return RouteSpec.of(policy, Algorithm.TOKEN_BUCKET, limit, 0, 1, key, FailureMode.OPEN);
    }

    private static Guard guard(WebSettings web, RouteSpec... routes) {
        return Guard.of(List.of(routes), web, MemoryStore.create(), "test");
    }

    @Test
    void anAllowedRequestProceedsWithHeadersAndARejectedOneIsAnswered429() {
        Guard guard = guard(WebSettings.DEFAULTS, route("g", "1/1m", "ip"));
        HttpAnswer allowed = guard.check(new TestRequest());
        assertThat(allowed.proceeds()).isTrue();
        assertThat(allowed.body()).isNull();
        assertThat(allowed.headers()).containsExactly(new HttpAnswer.Header("RateLimit-Limit", "1"),
                new HttpAnswer.Header("RateLimit-Remaining", "0"), new HttpAnswer.Header("RateLimit-Reset", "60"));

        HttpAnswer rejected = guard.check(new TestRequest());
        assertThat(rejected.status()).isEqualTo(429);
        assertThat(rejected.headers()).first().isEqualTo(new HttpAnswer.Header("Retry-After", "60"));
        assertThat(rejected.headers()).contains(new HttpAnswer.Header("RateLimit-Remaining", "0"));
        assertThat(rejected.body()).contains("\"status\":429", "\"policy\":\"g\"");
    }

    @Test
    void twoGuardsOfOneRequestReportEachOthersLimits() {
        WebSettings draft = WebSettings.DEFAULTS.withHeaders(HeaderStyle.DRAFT);
        TestRequest request = new TestRequest();
        guard(draft, route("outer", "100/1m", "ip")).check(request);
        Guard innerGuard = guard(draft, route("inner", "10/1m", "ip"));
        HttpAnswer inner = innerGuard.check(request);
        assertThat(inner.headers()).containsExactly(
                new HttpAnswer.Header("RateLimit-Policy", "\"outer\";q=100;w=60, \"inner\";q=10;w=60"),
                new HttpAnswer.Header("RateLimit", "\"outer\";r=99;t=1, \"inner\";r=9;t=6"));
        Guard none = guard(WebSettings.DEFAULTS.withHeaders(HeaderStyle.NONE), route("silent", "5/1m", "ip"));
        assertThat(none.check(request).headers()).isEmpty();
        // On the way out (JAX-RS), the same headers: a layer without headers publishes nothing.
        assertThat(innerGuard.headers(request)).isEqualTo(inner.headers());
    }

    @Test
    void shadowModeProceedsWithTheHeadersOfTheRejection() {
        Guard guard = guard(WebSettings.parse(Map.of("mode", "shadow")::get), route("s", "1/1m", "ip"));
        guard.check(new TestRequest());
        HttpAnswer shadowed = guard.check(new TestRequest());
        assertThat(shadowed.proceeds()).isTrue();
        assertThat(shadowed.headers()).contains(new HttpAnswer.Header("RateLimit-Remaining", "0"));
    }

    @Test
    void routesDecidedTogetherMustShareOneKey() {
        assertThatThrownBy(() -> guard(WebSettings.DEFAULTS, route("per-address", "1/s", "ip"),
                route("per-user", "1/s", "principal")))
                .hasMessageContaining("'ip' (policy 'per-address') and 'principal' (policy 'per-user')");
    }
}
