package dev.sluice.web.internal;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code charge}, {@code charge-when}, {@code lease} and {@code algorithm=concurrency} in the web
 * layer: their configuration and the guard's completions; over HTTP, see the adapters' tests.
 */
class AfterResponseGuardTest {

    private static RouteSpec parse(String... pairs) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            values.put(pairs[i], pairs[i + 1]);
        }
        return RouteSpec.parse(values::get, "p");
    }

    private static Guard guard(RouteSpec... routes) {
        return Guard.of(List.of(routes), WebSettings.DEFAULTS, MemoryStore.create(), "test");
    }

    @Test
    void theDefaultsAndTheParsedValues() {
        assertThat(parse("limit", "5/1m").charging()).isEqualTo(Charging.BEFORE);
        Charging failures = parse("limit", "5/1m", "charge", "after").charging();
        assertThat(failures.toString()).isEqualTo("charge after, when 4xx,5xx");
        assertThat(failures.counts(404)).isTrue();
        assertThat(failures.counts(503)).isTrue();
        assertThat(failures.counts(200)).isFalse();
        assertThat(failures.counts(302)).isFalse();
        Charging login = parse("limit", "5/1m", "charge", "AFTER", "charge-when", "401, 403").charging();
        assertThat(login.counts(401)).isTrue();
        assertThat(login.counts(403)).isTrue();
        assertThat(login.counts(400)).isFalse();
        assertThat(login.counts(500)).isFalse();

        RouteSpec cap = parse("limit", "7", "algorithm", "concurrency");
        assertThat(cap.limit()).isEqualTo(Limit.concurrency("p", 7, Duration.ofSeconds(30)));
        assertThat(parse("limit", "7", "algorithm", "concurrency", "lease", "2s").limit().period())
                .isEqualTo(Duration.ofSeconds(2));
        assertThat(cap.limit().toString()).isEqualTo("p: concurrency 7 lease 30s");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "charge=sometimes|'charge' must be before or after, got 'sometimes'",
            "charge-when=401|'charge-when' applies only with charge=after, got '401'",
            "charge=after,charge-when=abc|'charge-when' must be comma-separated status codes (100 to 599) or classes "
                    + "(1xx to 5xx), such as 401,403 or 4xx, got 'abc'",
            "charge=after,charge-when=401;403|got '401;403'",
            "charge=after,charge-when=600|got '600'",
            "charge=after,charge-when=6xx|got '6xx'",
            "charge=after,charge-when=401,,403|got '401,,403'",
            "lease=30s|'lease' applies only to algorithm concurrency, not to token-bucket, got '30s'",
            "algorithm=concurrency,limit=10/1m|'limit' of algorithm concurrency is the most requests in flight, an "
                    + "integer of at least 1 such as 10, got '10/1m'",
            "algorithm=concurrency,limit=0|got '0'",
            "algorithm=concurrency,limit=5,lease=soon|'lease' must look like <amount><unit>",
            "algorithm=concurrency,limit=5,lease=400d|'lease' must be between 1ms and 366d, got '400d'",
            "algorithm=concurrency,limit=5,burst=10|'burst' applies only to token-bucket and gcra, not to concurrency",
            "algorithm=concurrency,limit=5,cost=2|'cost' applies to rate limits",
            "algorithm=concurrency,limit=5,charge=after|'charge' applies to rate limits",
    })
    void badValuesStopStartUpNamingTheParameterAndTheValue(String settings, String message) {
        Map<String, String> values = new HashMap<>(Map.of("limit", "10/1m"));
        for (String pair : settings.split(",(?=[a-z-]+=)")) {
            String[] kv = pair.split("=", 2);
            values.put(kv[0], kv[1]);
        }
        assertThatThrownBy(() -> RouteSpec.parse(values::get, "p"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void chargeAfterRefundsWhatTheStatusDoesNotCount() {
        Guard guard = guard(parse("limit", "2/1h", "charge", "after", "charge-when", "401"));
        for (int i = 0; i < 10; i++) {
            HttpAnswer ok = guard.check(new TestRequest());
            assertThat(ok.proceeds()).as("success %d", i).isTrue();
            assertThat(ok.headers()).contains(new HttpAnswer.Header("RateLimit-Remaining", "1"));
            ok.afterResponse().complete(200);
        }
        guard.check(new TestRequest()).afterResponse().complete(401);
        HttpAnswer second = guard.check(new TestRequest());
        second.afterResponse().complete(401);
        second.afterResponse().complete(200); // once: the first report counts
        HttpAnswer refused = guard.check(new TestRequest());
        assertThat(refused.status()).isEqualTo(429);
        assertThat(refused.afterResponse()).isSameAs(AfterResponse.NONE);
    }

    @Test
    void aConcurrencyRouteHoldsALeaseUntilTheCompletionAndPublishesNoHeaders() {
        Guard guard = guard(parse("limit", "2", "algorithm", "concurrency"));
        HttpAnswer first = guard.check(new TestRequest());
        HttpAnswer second = guard.check(new TestRequest());
        assertThat(first.proceeds()).isTrue();
        assertThat(first.headers()).isEmpty();
        assertThat(second.proceeds()).isTrue();
        HttpAnswer third = guard.check(new TestRequest());
        assertThat(third.status()).isEqualTo(429);
        assertThat(third.headers()).containsExactly(new HttpAnswer.Header("Retry-After", "1"));
        assertThat(third.body()).contains("Too many requests in flight for policy 'p'");
        first.afterResponse().complete(500);
        assertThat(guard.check(new TestRequest()).proceeds()).as("the returned place").isTrue();
    }

    @Test
    void aRequestRefusedItsLeaseIsNotChargedByTheRateLimitsAndOneTheyRefuseTakesNoLease() {
        Guard guard = guard(parse("policy", "rate", "limit", "3/1h"),
                parse("policy", "cap", "limit", "1", "algorithm", "concurrency"));
        HttpAnswer holding = guard.check(new TestRequest());
        assertThat(holding.headers()).contains(new HttpAnswer.Header("RateLimit-Remaining", "2"));
        for (int i = 0; i < 5; i++) {
            assertThat(guard.check(new TestRequest()).body()).contains("in flight"); // refunded each time
        }
        holding.afterResponse().complete(200);
        HttpAnswer next = guard.check(new TestRequest());
        assertThat(next.headers()).as("only two charged").contains(new HttpAnswer.Header("RateLimit-Remaining", "1"));
        next.afterResponse().complete(200);
        guard.check(new TestRequest()).afterResponse().complete(200);
        HttpAnswer spent = guard.check(new TestRequest());
        assertThat(spent.body()).contains("Rate limit exceeded for policy 'rate'");
        // the rate limit refused it: it took no lease, so the cap of one still admits
        assertThat(guard.concurrencyLimiter().acquire("192.0.2.1").held()).isTrue();
    }

    @Test
    void repeatedLimitsMustAgreeOnChargingAndTakeOneLeaseAtMost() {
        assertThatThrownBy(() -> guard(parse("policy", "a", "limit", "3/1h", "charge", "after"),
                parse("policy", "b", "limit", "3/1h")))
                .hasMessageContaining("must share 'charge' and 'charge-when'");
        assertThatThrownBy(() -> guard(parse("policy", "a", "limit", "3", "algorithm", "concurrency"),
                parse("policy", "b", "limit", "3", "algorithm", "concurrency")))
                .hasMessageContaining("at most one limit of algorithm concurrency");
        assertThat(Algorithm.fromConfigName("concurrency")).isEqualTo(Algorithm.CONCURRENCY);
    }

    /** A cap on a route failing locally used to fail open without a word: leases cannot be kept locally. */
    @Test
    void aConcurrencyLimitFailingLocallyIsRefusedNamingTheParameterAndTheValue() {
        String refused =
                "'failure-mode' of concurrency policy 'cap' must be open or closed: its leases are held in the "
                + "store alone, so no local limiter can take over while the store fails, got 'local'";
        assertThatThrownBy(() -> guard(parse("policy", "cap", "limit", "3", "algorithm", "concurrency",
                "failure-mode", "local"))).isInstanceOf(IllegalArgumentException.class).hasMessage(refused);
        assertThatThrownBy(() -> guard(parse("policy", "rate", "limit", "3/1h", "failure-mode", "closed"),
                parse("policy", "cap", "limit", "3", "algorithm", "concurrency", "failure-mode", "local")))
                .hasMessage(refused);
        // a cap beside a rate limit failing locally fails as its own route says; beside a closed one, closed
        Guard beside = guard(parse("policy", "rate", "limit", "3/1h", "failure-mode", "local"),
                parse("policy", "cap", "limit", "3", "algorithm", "concurrency"));
        assertThat(beside.limiter().failureMode()).isEqualTo(FailureMode.LOCAL);
        assertThat(beside.concurrencyLimiter().failureMode()).isEqualTo(FailureMode.OPEN);
        Guard closed = guard(parse("policy", "rate", "limit", "3/1h", "failure-mode", "closed"),
                parse("policy", "cap", "limit", "3", "algorithm", "concurrency"));
        assertThat(closed.concurrencyLimiter().failureMode()).isEqualTo(FailureMode.CLOSED);
    }
}
