package dev.sluice.jaxrs;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.testing.HttpCalls;
import dev.sluice.testing.TestRedis;
import jakarta.annotation.Priority;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.SecurityContext;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.security.Principal;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RateLimit(tiers = ...)} with {@code sluice.tier}, {@code sluice.exempt} and {@code methods}, in Jersey on
 * Jetty.
 */
class TiersTest {

    /** The roles of each user; changed by the tests. */
    static final Map<String, Set<String>> ROLES = new ConcurrentHashMap<>();

    private static final Map<String, JerseyApp> APPS = new ConcurrentHashMap<>();

    /** The application's authentication: the user named by {@code X-User}, with the roles of {@link #ROLES}. */
    @Priority(Priorities.AUTHENTICATION)
    public static class RoleAuthentication implements ContainerRequestFilter {
        @Override
        public void filter(ContainerRequestContext request) {
            String user = request.getHeaderString("X-User");
            if (user == null) {
                return;
            }
            Principal principal = () -> user;
            request.setSecurityContext(new SecurityContext() {
                @Override
                public Principal getUserPrincipal() {
                    return principal;
                }

                @Override
                public boolean isUserInRole(String role) {
                    return ROLES.getOrDefault(user, Set.of()).contains(role);
                }

                @Override
                public boolean isSecure() {
                    return false;
                }

                @Override
                public String getAuthenticationScheme() {
                    return "X-User";
                }
            });
        }
    }

    @Path("reports")
    public static class Reports {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(limit = "10/1h", algorithm = Algorithm.SLIDING_LOG, key = "principal,ip",
                tiers = {"premium:100/1h", "internal:unlimited"}, failureMode = FailureMode.CLOSED)
        public String get() {
            return "reports";
        }
    }

    /** A class annotation over two methods, limiting one. */
    @Path("orders")
    @RateLimit(limit = "1/1h", key = "header:X-Client", methods = "POST")
    public static class Orders {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        public String list() {
            return "orders";
        }

        @POST
        @Produces(MediaType.TEXT_PLAIN)
        public String create() {
            return "created";
        }
    }

    /** A resource limiting its GET; JAX-RS answers HEAD with the @GET method. */
    @Path("pages")
    public static class Pages {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(limit = "2/1h", key = "header:X-Client", methods = "GET")
        public String get() {
            return "page";
        }

        @POST
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(limit = "1/1h", key = "header:X-Client", methods = {"PROPFIND", "POST"})
        public String post() {
            return "posted";
        }
    }

    @BeforeAll
    static void start() throws Exception {
        APPS.put("memory", app("memory", "2s"));
        APPS.put("redis", app(TestRedis.shared().url(), "2s"));
        // Nothing listens there: every store call fails, and /reports fails closed.
        APPS.put("dead", app("redis://127.0.0.1:" + TestRedis.freePort(), "200ms"));
    }

    private static JerseyApp app(String store, String timeout) throws Exception {
        return JerseyApp.start(new ResourceConfig(Reports.class, Orders.class, Pages.class)
                .register(RoleAuthentication.class)
                .register(RateLimitFeature.class)
                .property("sluice.store", store)
                .property("sluice.timeout", timeout)
                .property("sluice.tier", "role")
                .property("sluice.exempt", "192.0.2.0/24"));
    }

    @AfterAll
    static void stop() {
        APPS.values().forEach(JerseyApp::close);
    }

    private static String user(String name, String... roles) {
        String user = name + "-" + UUID.randomUUID(); // the shared Redis outlives the test
        ROLES.put(user, Set.of(roles));
        return user;
    }

    private static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
    }

    /** Sends requests until the first that is not a 200 (at most {@code max + 5}); returns how many were admitted. */
    private static int admitted(JerseyApp app, String path, int max, String... headers) {
        for (int i = 0; i < max + 5; i++) {
            HttpResponse<String> response = app.get(path, headers);
            if (response.statusCode() != 200) {
                assertThat(response.statusCode()).isEqualTo(429);
                return i;
            }
        }
        return max + 5;
    }

    /** Waits (bounded) until the store decides, as a caller of its own: Redis connects on a thread of its own. */
    private static void awaitDecided(JerseyApp app) throws InterruptedException {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
        String warmUp = user("warm-up");
        while (header(app.get("/reports", "X-User", warmUp), "RateLimit-Limit") == null
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void aPremiumPrincipalGetsAHundredAndAFreeOneTenAndARoleChangeMeetsTheNewTier(String store) throws Exception {
        JerseyApp app = APPS.get(store);
        awaitDecided(app);
        String premium = user("premium", "premium");
        assertThat(header(app.get("/reports", "X-User", premium), "RateLimit-Limit")).isEqualTo("100");
        assertThat(1 + admitted(app, "/reports", 100, "X-User", premium)).isEqualTo(100);
        String free = user("free");
        assertThat(admitted(app, "/reports", 10, "X-User", free)).isEqualTo(10);
        ROLES.put(free, Set.of("premium"));
        HttpResponse<String> upgraded = app.get("/reports", "X-User", free);
        assertThat(upgraded.statusCode()).isEqualTo(200);
        assertThat(header(upgraded, "RateLimit-Limit")).isEqualTo("100");
        assertThat(header(upgraded, "RateLimit-Remaining")).isEqualTo("99");
    }

    @Test
    void anUnlimitedTierNeverAsksTheStore() {
        JerseyApp dead = APPS.get("dead");
        String internal = user("internal", "internal");
        for (int i = 0; i < 20; i++) {
            HttpResponse<String> response = dead.get("/reports", "X-User", internal);
            assertThat(response.statusCode()).isEqualTo(200);
            assertThat(response.headers().map().keySet()).noneMatch(n -> n.toLowerCase().startsWith("ratelimit"));
        }
        // The tiers that ask the store meet the dead store, and fail closed.
        assertThat(dead.get("/reports", "X-User", user("free")).statusCode()).isEqualTo(503);
        assertThat(dead.get("/reports", "X-User", user("premium", "premium")).statusCode()).isEqualTo(503);
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void methodsOfAClassAnnotationLimitOnlyThose(String store) throws Exception {
        JerseyApp app = APPS.get(store);
        awaitDecided(app);
        String client = "c-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> list = app.get("/orders", "X-Client", client);
            assertThat(list.statusCode()).isEqualTo(200);
            assertThat(header(list, "RateLimit-Limit")).isNull();
        }
        assertThat(app.post("/orders", "X-Client", client).statusCode()).isEqualTo(200);
        assertThat(app.post("/orders", "X-Client", client).statusCode()).isEqualTo(429);
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    void methodsNamingGetCoverHead(String store) throws Exception {
        JerseyApp app = APPS.get(store);
        awaitDecided(app);
        String client = "c-" + UUID.randomUUID();
        assertThat(app.get("/pages", "X-Client", client).statusCode()).isEqualTo(200);
        assertThat(HttpCalls.send("HEAD", app.uri("/pages"), "X-Client", client).statusCode()).isEqualTo(200);
        assertThat(HttpCalls.send("HEAD", app.uri("/pages"), "X-Client", client).statusCode()).isEqualTo(429);
        assertThat(app.get("/pages", "X-Client", client).statusCode()).isEqualTo(429);
        assertThat(app.post("/pages", "X-Client", client).statusCode()).isEqualTo(200);
        assertThat(app.post("/pages", "X-Client", client).statusCode()).isEqualTo(429);
    }
}
