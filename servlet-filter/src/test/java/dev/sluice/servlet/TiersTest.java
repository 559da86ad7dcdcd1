package dev.sluice.servlet;

import dev.sluice.testing.TestRedis;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Tiers over HTTP: one policy whose limit depends on who is calling, on both stores. */
class TiersTest {

    /** The roles of each user, as the application's user store would hold them; changed by the tests. */
    static final Map<String, Set<String>> ROLES = new ConcurrentHashMap<>();

    /**
     * Stands in for the container's authentication: the user named by {@code X-User}, with the roles of {@link #ROLES}.
     */
    static final class RoleLogin implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest request = (HttpServletRequest) req;
            String user = request.getHeader("X-User");
            chain.doFilter(user == null ? request : new HttpServletRequestWrapper(request) {
                @Override
                public Principal getUserPrincipal() {
                    return () -> user;
                }

                @Override
                public boolean isUserInRole(String role) {
                    return ROLES.getOrDefault(user, Set.of()).contains(role);
                }
            }, res);
        }
    }

    /** The application's own authentication putting the plan in a request attribute, from {@code X-Plan}. */
    static final class PlanAttribute implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException {
            String plan = ((HttpServletRequest) req).getHeader("X-Plan");
            if (plan != null) {
                req.setAttribute("com.example.plan", plan);
            }
            chain.doFilter(req, res);
        }
    }

    static Iterable<Container> containers() {
        return Container.selected();
    }

    static List<Arguments> containersAndStores() {
        List<Arguments> all = new ArrayList<>();
        for (Container container : Container.selected()) {
            all.add(Arguments.of(container, "memory"));
            all.add(Arguments.of(container, "redis"));
        }
        return all;
    }

    private static String store(String name) {
        return name.equals("memory") ? "memory" : TestRedis.shared().url();
    }

    /** A user of its own per test and run: the shared Redis outlives the test. */
    private static String user(String name, String... roles) {
        String user = name + "-" + UUID.randomUUID();
        ROLES.put(user, Set.of(roles));
        return user;
    }

    /** Sends requests until the first that is not a 200 (at most {@code max + 5}); returns how many were admitted. */
    private static int admitted(URI uri, int max, String... headers) {
        for (int i = 0; i < max + 5; i++) {
            HttpResponse<String> response = get(uri, headers);
            if (response.statusCode() != 200) {
                assertThat(response.statusCode()).as("the refusal after %d", i).isEqualTo(429);
                assertThat(header(response, "Retry-After")).isNotNull();
                return i;
            }
        }
        return max + 5;
    }

    private static TestApp roleApp(String store) {
        return new TestApp()
                .instance("login", new RoleLogin(), "/*")
                .filter("api", "/*", "limit", "10/1h", "algorithm", "sliding-log", "key", "principal,ip", "tier",
                        "role", "tier-limits", "premium:100/1h,internal:unlimited", "store", store, "timeout", "2s");
    }

    /**
     * Tier {@code premium} of policy {@code api} and a filter whose policy is {@code api.premium}
     * keep apart: a tier's state is named with a separator no configured policy can hold.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void aTierNeverSharesStateWithAPolicyOfTheSameDottedName(Container container, String store) throws Exception {
        String policy = "api-" + UUID.randomUUID();
        TestApp app = new TestApp()
                .instance("plans", new PlanAttribute(), "/*")
                .filter("api", "/a/*", "policy", policy, "limit", "1/1h", "key", "header:X-Client",
                        "tier", "attribute:com.example.plan", "tier-limits", "premium:2/1h", "store", store(store),
                        "timeout", "2s")
                .filter("other", "/b/*", "policy", policy + ".premium", "limit", "2/1h", "key", "header:X-Client",
                        "store", store(store), "timeout", "2s");
        try (var running = container.start(app)) {
            Http.awaitDecided("GET", running.uri("/a/x"), "X-Client", "warm-up-a");
            Http.awaitDecided("GET", running.uri("/b/x"), "X-Client", "warm-up-b");
            String client = "c-" + UUID.randomUUID();
            assertThat(admitted(running.uri("/a/x"), 2, "X-Client", client, "X-Plan", "premium")).isEqualTo(2);
            assertThat(admitted(running.uri("/b/x"), 2, "X-Client", client)).isEqualTo(2);
        }
    }

    @Test
    void aConfiguredPolicyCannotTakeATiersName() {
        TestApp app = new TestApp().filter("api", "/*", "policy", "api/premium", "limit", "1/1h");
        for (Container container : Container.selected()) {
            assertThatThrownBy(() -> container.start(app).close()).satisfies(e -> assertThat(messages(e))
                    .anyMatch(m -> m.startsWith("filter 'api': init-param 'policy' must be 1 to 64 characters of "
                            + "A-Z a-z 0-9 . _ ~ -") && m.endsWith("got 'api/premium'")));
        }
    }

    private static List<String> messages(Throwable thrown) {
        List<String> messages = new ArrayList<>();
        for (Throwable t = thrown; t != null && messages.size() < 20; t = t.getCause()) {
            messages.add(String.valueOf(t.getMessage()));
        }
        return messages;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void aPremiumPrincipalGetsAHundredAndAFreeOneTen(Container container, String store) throws Exception {
        try (var running = container.start(roleApp(store(store)))) {
            URI uri = running.uri("/reports");
            Http.awaitDecided("GET", uri, "X-User", user("warm-up"));
            String premium = user("premium", "premium");
            String free = user("free");
            HttpResponse<String> first = get(uri, "X-User", premium);
            assertThat(header(first, "RateLimit-Limit")).isEqualTo("100");
            assertThat(header(first, "RateLimit-Remaining")).isEqualTo("99");
            assertThat(1 + admitted(uri, 100, "X-User", premium)).isEqualTo(100);
            assertThat(header(get(uri, "X-User", free), "RateLimit-Limit")).isEqualTo("10");
            assertThat(1 + admitted(uri, 10, "X-User", free)).isEqualTo(10);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void afterTheRoleChangesTheNextDecisionUsesTheNewTier(Container container, String store) throws Exception {
        try (var running = container.start(roleApp(store(store)))) {
            URI uri = running.uri("/reports");
            Http.awaitDecided("GET", uri, "X-User", user("warm-up"));
            String user = user("upgraded");
            assertThat(admitted(uri, 10, "X-User", user)).isEqualTo(10);
            ROLES.put(user, Set.of("premium")); // upgraded: the premium budget, whole, at the next request
            HttpResponse<String> upgraded = get(uri, "X-User", user);
            assertThat(upgraded.statusCode()).isEqualTo(200);
            assertThat(header(upgraded, "RateLimit-Limit")).isEqualTo("100");
            assertThat(header(upgraded, "RateLimit-Remaining")).isEqualTo("99");
            ROLES.put(user, Set.of()); // downgraded: back to the spent free budget
            HttpResponse<String> downgraded = get(uri, "X-User", user);
            assertThat(downgraded.statusCode()).isEqualTo(429);
            assertThat(header(downgraded, "RateLimit-Limit")).isEqualTo("10");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void anUnlimitedTierNeverAsksTheStore(Container container) throws Exception {
        // Nothing listens there: every store call fails, and the route fails closed.
        String dead = "redis://127.0.0.1:" + TestRedis.freePort();
        TestApp app = new TestApp()
                .instance("login", new RoleLogin(), "/*")
                .filter("api", "/*", "limit", "10/1h", "algorithm", "sliding-log", "key", "principal,ip", "tier",
                        "role", "tier-limits", "premium:100/1h,internal:unlimited", "store", dead, "timeout", "200ms",
                        "failure-mode", "closed");
        try (var running = container.start(app)) {
            URI uri = running.uri("/reports");
            String internal = user("internal", "internal");
            for (int i = 0; i < 20; i++) {
                HttpResponse<String> response = get(uri, "X-User", internal);
                assertThat(response.statusCode()).isEqualTo(200);
                assertThat(response.body()).isEqualTo("ok");
                assertThat(response.headers().map().keySet())
                        .noneMatch(name -> name.toLowerCase().startsWith("ratelimit"));
            }
            assertThat(get(uri, "X-User", user("free")).statusCode()).isEqualTo(503);
            assertThat(get(uri, "X-User", user("premium", "premium")).statusCode()).isEqualTo(503);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void theTierComesFromARequestAttributeOrAHeader(Container container, String store) throws Exception {
        String policy = "plans-" + UUID.randomUUID();
        TestApp app = new TestApp()
                .instance("auth", new PlanAttribute(), "/*")
                .filter("by-attribute", "/attribute/*", "policy", policy + "-a", "limit", "1/1h", "key",
                        "header:X-Client", "tier", "attribute:com.example.plan", "tier-limits", "gold:3/1h",
                        "store", store(store), "timeout", "2s")
                .filter("by-header", "/header/*", "policy", policy + "-h", "limit", "1/1h", "key", "header:X-Client",
                        "tier", "header:X-Plan", "tier-limits", "gold:3/1h", "store", store(store), "timeout", "2s");
        try (var running = container.start(app)) {
            for (String path : List.of("/attribute/x", "/header/x")) {
                URI uri = running.uri(path);
                Http.awaitDecided("GET", uri, "X-Client", "warm-up");
                assertThat(admitted(uri, 3, "X-Client", "c1", "X-Plan", "gold")).as(path).isEqualTo(3);
                assertThat(admitted(uri, 1, "X-Client", "c1")).as(path + ", no plan").isEqualTo(1);
                assertThat(admitted(uri, 1, "X-Client", "c2", "X-Plan", "platinum")).as(path + ", unknown plan")
                        .isEqualTo(1);
            }
        }
    }
}
