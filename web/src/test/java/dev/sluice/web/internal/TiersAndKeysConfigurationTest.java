package dev.sluice.web.internal;

import dev.sluice.web.RequestView;
import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Tiers, composite and global keys, exemptions and methods: bad values stop start-up naming parameter and value. */
class TiersAndKeysConfigurationTest {

    private static Map<String, String> values(String... pairs) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            values.put(pairs[i], pairs[i + 1]);
        }
        return values;
    }

    /** A request of {@code method} from the caller {@code X-Client: c}. */
    private static RequestView request(String method) {
        return new TestRequest(method, Map.of("X-Client", "c"));
    }

    /** Parses a filter's init-params and builds its guard, as the servlet filter's init does. */
    private static Guard start(String... pairs) {
        Map<String, String> values = values(pairs);
        values.putIfAbsent("limit", "10/1m");
        RouteSpec route = RouteSpec.parse(values::get, "test-policy");
        return Guard.of(List.of(route), WebSettings.parse(values::get), MemoryStore.create(), "test");
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
            "tier|cookie:plan|'tier' must be role, attribute:NAME or header:NAME, got 'cookie:plan'",
            "tier|attribute:|'tier' must be role, attribute:NAME or header:NAME",
            "tier|header:|'tier' must be role",
            "tier-limits|premium|'tier-limits' must be a comma-separated list of name:<count>/<period> or "
            + "name:unlimited",
            "tier-limits|premium:|'tier-limits' must be a comma-separated list",
            "tier-limits|:100/1h|'tier-limits' must be a comma-separated list",
            "tier-limits|pre mium:100/1h|'tier-limits' must be a comma-separated list",
            "tier-limits|premium:100/1h,|'tier-limits' must be a comma-separated list",
            "tier-limits|premium:lots|'tier-limits' tier 'premium': 'limit' must look like <count>/<period>",
            "tier-limits|premium:100/1h,premium:200/1h|'tier-limits' names the tier 'premium' twice",
            "key|ip+|'key' has an empty part in 'ip+'",
            "key|+ip|'key' has an empty part in '+ip'",
            "key|ip++param:x|'key' has an empty part in 'ip++param:x'",
            "key|header:X-API-Key,ip+ ,ip|'key' has an empty part",
            "key|ip+cookie:x|'key' must be a comma-separated list",
            "key|global,ip|'key' global is one budget for the whole route and combines with no other source",
            "key|ip,global|'key' global is one budget",
            "key|ip+global|'key' global is one budget",
            "exempt|10.0.0.0/33|'exempt' must be comma-separated CIDRs or IP addresses",
            "exempt|health-checker|'exempt' must be comma-separated CIDRs",
            "methods|GET;POST|'methods' must be a comma-separated list of HTTP method tokens (e.g. POST,PUT or "
            + "PROPFIND), got 'GET;POST'",
            "methods|POST,|'methods' must be a comma-separated list of HTTP method tokens",
            "methods|GET POST|'methods' must be a comma-separated list of HTTP method tokens",
            "methods|(GET)|'methods' must be a comma-separated list of HTTP method tokens",
            "methods|GÉT|'methods' must be a comma-separated list of HTTP method tokens",
    })
    void badValuesAreRefusedNamingParameterAndValue(String name, String value, String message) {
        String[] pairs = name.equals("tier-limits") ? new String[]{name, value, "tier", "role"}
                : new String[]{name, value};
        assertThatThrownBy(() -> start(pairs))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message)
                .hasMessageContaining(value);
    }

    @Test
    void methodsTakeAnyMethodTokenAndGetCoversHead() {
        assertThat(RouteSpec.parse(values("limit", "1/1m", "methods", "propfind, QUERY,M-SEARCH,MKCOL")::get, "dav")
                .methods()).isEqualTo(Set.of("PROPFIND", "QUERY", "M-SEARCH", "MKCOL"));
        // HttpServlet.doHead runs doGet, and JAX-RS answers HEAD with the @GET method.
        assertThat(RouteSpec.parse(values("limit", "1/1m", "methods", "get")::get, "reads").methods())
                .isEqualTo(Set.of("GET", "HEAD"));
        assertThat(RouteSpec.parse(values("limit", "1/1m", "methods", "HEAD")::get, "heads").methods())
                .isEqualTo(Set.of("HEAD"));
        Guard guard = start("limit", "1/1h", "methods", "GET", "key", "header:X-Client");
        assertThat(guard.check(request("GET")).status()).isEqualTo(HttpAnswer.PROCEED);
        assertThat(guard.check(request("HEAD")).status()).isEqualTo(429);
        assertThat(guard.check(request("POST")).headers()).isEmpty();
    }

    @Test
    void tiersNeedATierSource() {
        assertThatThrownBy(() -> start("tier-limits", "premium:100/1m"))
                .hasMessageContaining("'tier-limits' needs 'tier' (role, attribute:NAME or header:NAME)")
                .hasMessageContaining("got 'premium:100/1m'");
    }

    @Test
    void aTierPolicyNameMustFitTheSixtyFourCharacters() {
        String policy = "p".repeat(60);
        assertThatThrownBy(() -> start("policy", policy, "tier", "role", "tier-limits", "premium:100/1m"))
                .hasMessageContaining("'tier-limits' tier 'premium': 'policy' must be 1 to 64 characters")
                .hasMessageContaining(policy + "/premium");
    }

    @Test
    void aTierCostMustFitTheTier() {
        assertThatThrownBy(() -> start("limit", "10/1m", "cost", "5", "tier", "role", "tier-limits", "tiny:2/1m"))
                .hasMessageContaining("'tier-limits' tier 'tiny': 'cost' must not exceed the burst (2)");
    }

    @Test
    void goodValuesParse() {
        Map<String, String> values = values("limit", "100/1h", "tier-limits", "premium:1000/1h, internal:unlimited",
                "key", "ip+param:username, ip", "methods", "post,Put", "exempt", "10.0.0.0/8, ::1", "tier",
                "attribute:plan");
        RouteSpec route = RouteSpec.parse(values::get, "login");
        assertThat(route.tiers()).hasToString("[premium:1000/1h, internal:unlimited]");
        assertThat(route.tiers().get(0).limit().policy()).isEqualTo("login/premium");
        assertThat(route.tiers().get(0).limit().burst()).isEqualTo(1000);
        assertThat(route.tiers().get(1).unlimited()).isTrue();
        assertThat(route.key()).hasToString("[ip+param:username, ip]");
        assertThat(route.methods()).isEqualTo(Set.of("POST", "PUT"));
        CallerRules rules = CallerRules.parse(values::get);
        assertThat(rules.tier()).isEqualTo(new TierSource(TierSource.Kind.ATTRIBUTE, "plan"));
        assertThat(rules.exempt()).extracting(Cidr::toString).containsExactly("10.0.0.0/8", "0:0:0:0:0:0:0:1/128");
        assertThat(KeySource.parseList("global")).hasToString("[global]");
        assertThat(TierSource.parse("Header:X-Plan")).hasToString("header:X-Plan");
    }
}
