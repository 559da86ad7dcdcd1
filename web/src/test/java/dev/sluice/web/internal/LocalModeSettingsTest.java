package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code failure-mode=local} and {@code local-share} as the web layer reads them, and the answers
 * of a guard whose store fails. Over HTTP with Redis stalled and killed: the servlet filter's
 * {@code LocalFailureModeTest}.
 */
class LocalModeSettingsTest {

    private static Map<String, String> values(String... pairs) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            values.put(pairs[i], pairs[i + 1]);
        }
        return values;
    }

    /** A store that always fails: what a guard meets while Redis is down. */
    private static final class Down implements RateLimitStore {
        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return CompletableFuture.failedFuture(new IllegalStateException("connection refused"));
        }

        @Override
        public void close() {
        }
    }

    @Test
    void failureModeLocalAndLocalShareParse() {
        Map<String, String> values = values("limit", "10/1m", "failure-mode", "LOCAL", "local-share", "0.33");
        assertThat(RouteSpec.parse(values::get, "p").failureMode()).isEqualTo(FailureMode.LOCAL);
        assertThat(WebSettings.parse(values::get).localShare()).isEqualTo(0.33);
        assertThat(WebSettings.parse(values("local-share", ".5")::get).localShare()).isEqualTo(0.5);
        assertThat(WebSettings.parse(values("local-share", "1")::get).localShare()).isEqualTo(1.0);
        assertThat(WebSettings.parse(values()::get).localShare()).as("default").isEqualTo(1.0);
        assertThat(WebSettings.DEFAULTS.withHeaders(HeaderStyle.BOTH).localShare()).isEqualTo(1.0);
        WebSettings third = WebSettings.parse(values("local-share", "0.33")::get);
        assertThat(third.withHeaders(HeaderStyle.DRAFT).withIpv6Prefix(48).withPartitionKey(true)
                .withTrustedProxies("10.0.0.0/8").withForwardedHeader("forwarded").localShare())
                .as("the with* copies keep the share").isEqualTo(0.33);
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "0.0", "1.5", "2", "-0.5", "abc", "NaN", "Infinity", "1e-1", "0x1p-2", "33%", "0,33"})
    void aBadLocalShareIsRefusedNamingItAndTheValue(String value) {
        assertThatThrownBy(() -> WebSettings.parse(values("local-share", value)::get))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'local-share' must be a fraction greater than 0 and at most 1 (e.g. 0.33), got '"
                        + value + "'");
    }

    @Test
    void aGuardOfSeveralRoutesTakesTheStrictestMode() {
        WebSettings web = WebSettings.DEFAULTS;
        RouteSpec open = RouteSpec.of("o", Algorithm.TOKEN_BUCKET, "5/1m", 0, 1, "ip", FailureMode.OPEN);
        RouteSpec local = RouteSpec.of("l", Algorithm.TOKEN_BUCKET, "5/1m", 0, 1, "ip", FailureMode.LOCAL);
        RouteSpec closed = RouteSpec.of("c", Algorithm.TOKEN_BUCKET, "5/1m", 0, 1, "ip", FailureMode.CLOSED);
        Down down = new Down();
        assertThat(Guard.of(List.of(open, local), web, down, "t").limiter().failureMode()).isEqualTo(FailureMode.LOCAL);
        assertThat(Guard.of(List.of(local, open), web, down, "t").limiter().failureMode()).isEqualTo(FailureMode.LOCAL);
        assertThat(Guard.of(List.of(local, closed), web, down, "t").limiter().failureMode())
                .isEqualTo(FailureMode.CLOSED);
        assertThat(Guard.of(List.of(closed, local), web, down, "t").limiter().failureMode())
                .isEqualTo(FailureMode.CLOSED);
    }

    @Test
    void aLocalRejectionIsAnOrdinary429WithTheHeadersOfTheLocalLimit() {
        RouteSpec route = RouteSpec.of("local-route", Algorithm.FIXED_WINDOW, "10/1h", 0, 1, "ip", FailureMode.LOCAL);
        WebSettings web = WebSettings.parse(values("local-share", "0.33", "headers", "both")::get);
        Guard guard = Guard.of(List.of(route), web, new Down(), "filter 'local-route'");
        for (int i = 0; i < 3; i++) {
            HttpAnswer answer = guard.check(new TestRequest());
            assertThat(answer.status()).as("local request %d", i + 1).isEqualTo(HttpAnswer.PROCEED);
            assertThat(header(answer, "RateLimit-Limit")).isEqualTo("3");
            assertThat(header(answer, "RateLimit-Remaining")).isEqualTo(Integer.toString(2 - i));
            assertThat(header(answer, "RateLimit-Policy")).isEqualTo("\"local-route\";q=3;w=3600");
        }
        HttpAnswer refused = guard.check(new TestRequest());
        assertThat(refused.status()).isEqualTo(429);
        assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 3600L);
        assertThat(header(refused, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(refused, "RateLimit-Policy")).isEqualTo("\"local-route\";q=3;w=3600");
        assertThat(refused.body()).contains("Rate limit exceeded for policy 'local-route'");
    }

    private static String header(HttpAnswer answer, String name) {
        return answer.headers().stream().filter(h -> h.name().equals(name)).map(HttpAnswer.Header::value).findFirst()
                .orElse(null);
    }
}
