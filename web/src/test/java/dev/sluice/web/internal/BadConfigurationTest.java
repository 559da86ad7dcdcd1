package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.internal.Durations;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Bad values are refused with a message naming the parameter and the raw value. */
class BadConfigurationTest {

    /** What one filter's init-params parse into. */
    private record Parsed(RouteSpec route, WebSettings web) {
    }

    private static Parsed parse(String... pairs) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            values.put(pairs[i], pairs[i + 1]);
        }
        return new Parsed(RouteSpec.parse(values::get, "test-policy"), WebSettings.parse(values::get));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
            "limit|0/s|'limit'",
            "limit|-1/m|'limit'",
            "limit|10/0s|'limit'",
            "limit|abc|'limit'",
            "limit|100/minutes|'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'",
            "limit|10/2w|'limit'",
            "algorithm|leaky-bucket|'algorithm' must be one of token-bucket, gcra, sliding-window, fixed-window, "
            + "sliding-log, concurrency, got 'leaky-bucket'",
            "burst|0|'burst' must be an integer of at least 1, got '0'",
            "burst|-3|'burst'",
            "burst|many|'burst'",
            "cost|0|'cost'",
            "cost|11|'cost' must not exceed the burst (10)",
            "failure-mode|sometimes|'failure-mode' must be open, closed or local, got 'sometimes'",
            "timeout|50|'timeout' must look like <amount><unit>",
            "timeout|0ms|'timeout' must be between 1ms and 1m, got '0ms'",
            "timeout|2h|'timeout' must be between 1ms and 1m",
            "headers|all|'headers' must be legacy, draft-10 (alias draft), both or none, got 'all'",
            "headers|draft-11|'headers' must be legacy, draft-10 (alias draft), both or none, got 'draft-11'",
            "partition-key|yes|'partition-key' must be true or false, got 'yes'",
            "key|cookie:session|'key' must be a comma-separated list",
            "key|header:,ip|'key'",
            "store|mongodb://x|'store' must be memory, redis://host:port[/db]",
            "store|redis://127.0.0.1:99999|'store' has port 99999, outside 1 to 65535",
            "store|redis://127.0.0.1:0|'store' has port 0",
            "store|redis://127.0.0.1:6379/99|'store' names database '99'; Redis numbers them 0 to 15",
            "store|rediss://127.0.0.1:6379/16|'store' names database '16'",
            "trusted-proxies|10.0.0.0/33|'trusted-proxies'",
            "trusted-proxies|not-an-ip|'trusted-proxies' must be comma-separated CIDRs or IP addresses",
            "trusted-proxies|999.1.1.1|'trusted-proxies'",
            "policy|has space|'policy' must be 1 to 64 characters",
            "policy|{tag}|'policy'",
            "policy|api/premium|'policy' must be 1 to 64 characters of A-Z a-z 0-9 . _ ~ - ('/' names a tier's state",
            "policy|a/b/c|'policy' must be 1 to 64 characters",
            "mode|dry-run|'mode' must be enforce or shadow, got 'dry-run'",
            "metrics|yes|'metrics' must be true or false, got 'yes'",
    })
    void badValuesAreRefusedNamingParameterAndValue(String name, String value, String message) {
        String limit = name.equals("limit") ? value : "10/s";
        assertThatThrownBy(() -> parse("limit", limit, name, value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message)
                .hasMessageContaining(value);
    }

    @Test
    void missingLimitIsNamed() {
        assertThatThrownBy(() -> parse("algorithm", "gcra")).hasMessageContaining("'limit' is required");
    }

    @Test
    void burstIsRefusedForWindowAlgorithms() {
        assertThatThrownBy(() -> parse("limit", "10/s", "algorithm", "fixed-window", "burst", "20"))
                .hasMessageContaining("'burst' applies only to token-bucket and gcra, not to fixed-window, got '20'");
    }

    @Test
    void unknownParameterNamesAreRefused() {
        assertThatThrownBy(() -> Parameter.named("limt")).hasMessageContaining("'limt' is not a Sluice parameter");
    }

    @Test
    void limitsTooLargeToCountExactlyAreRefused() {
        assertThatThrownBy(() -> Limit.of("huge", 1_000_000_000L, Duration.ofDays(366))
                .withAlgorithm(Algorithm.SLIDING_WINDOW))
                .hasMessageContaining("too large for sliding-window");
        assertThatThrownBy(() -> new Limit("huge", Algorithm.SLIDING_LOG, 1_000_001, Duration.ofHours(1), 1_000_001, 1))
                .hasMessageContaining("sliding-log");
    }

    @Test
    void limiterNeedsALimitAndDistinctPolicies() {
        assertThatThrownBy(() -> RateLimiter.builder().build()).hasMessageContaining("at least one 'limit'");
        assertThatThrownBy(() -> RateLimiter.builder().limit(Limit.of("a", "1/s")).limit(Limit.of("a", "5/1m")).build())
                .hasMessageContaining("'policy' 'a' is used by two limits");
    }

    @Test
    void goodValuesParseWithDefaults() {
        Parsed config = parse("limit", "20/500ms", "key", "header:X-API-Key, ip", "trusted-proxies", "10.0.0.0/8, ::1",
                "algorithm", "GCRA", "burst", "40", "timeout", "50ms", "headers", "both", "store",
                "redis://127.0.0.1:6379/2");
        assertThat(config.route().limit())
                .isEqualTo(new Limit("test-policy", Algorithm.GCRA, 20, Duration.ofMillis(500), 40, 1));
        assertThat(config.route().key()).hasToString("[header:X-API-Key, ip]");
        assertThat(config.web().callers().trustedProxies()).extracting(Cidr::toString)
                .containsExactly("10.0.0.0/8", "0:0:0:0:0:0:0:1/128");
        assertThat(config.web().timeout()).isEqualTo(Duration.ofMillis(50));
        assertThat(config.route().failureMode()).isEqualTo(FailureMode.OPEN);
        assertThat(config.web().headers()).isEqualTo(HeaderStyle.BOTH);
        assertThat(Durations.parseRate("10/s")).isEqualTo(new Durations.Rate(10, Duration.ofSeconds(1)));
        assertThat(Durations.parseRate("1000/1d")).isEqualTo(new Durations.Rate(1000, Duration.ofDays(1)));
        assertThat(Limit.of("x", "5000/1h")).hasToString("x: token-bucket 5000/1h burst 5000 cost 1");
    }

    @Test
    void headersNameTheDraftRevisionAndKeepDraftAsItsAlias() {
        assertThat(HeaderStyle.parse("draft-10")).isEqualTo(HeaderStyle.DRAFT);
        assertThat(HeaderStyle.parse("draft")).isEqualTo(HeaderStyle.DRAFT);
        assertThat(HeaderStyle.parse(" Draft-10 ")).isEqualTo(HeaderStyle.DRAFT);
        assertThat(HeaderStyle.DRAFT.configName()).isEqualTo("draft-10");
        assertThat(HeaderStyle.DRAFT_REVISION).isEqualTo("draft-ietf-httpapi-ratelimit-headers-10");
        assertThat(parse("limit", "5/s").web().partitionKey()).isFalse();
        assertThat(parse("limit", "5/s", "partition-key", "TRUE").web().partitionKey()).isTrue();
    }
}
