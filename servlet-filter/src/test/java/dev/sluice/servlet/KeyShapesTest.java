package dev.sluice.servlet;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.HttpCalls;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

/** Composite and global keys, exemptions and methods, over HTTP, on both stores. */
class KeyShapesTest {

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

    private static boolean hasRateLimitHeaders(HttpResponse<?> response) {
        return response.headers().map().keySet().stream().anyMatch(name -> name.toLowerCase().startsWith("ratelimit"));
    }

    /** A login attempt of {@code user} from {@code address}, through the trusted proxy 127.0.0.1. */
    private static int attempt(TestApp.Running app, String user, String address) {
        return get(app.uri("/login?username=" + user), "X-Forwarded-For", address).statusCode();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void ipPlusUserNameKeepsUsersBehindOneAddressApartAndAPerUserLimitCountsAcrossAddresses(Container container,
            String store) throws Exception {
        TestApp app = new TestApp()
                .filter("login-pair", "/login", "limit", "3/1h", "key", "ip+param:username,ip",
                        "trusted-proxies", "127.0.0.1", "store", store(store), "timeout", "2s")
                .filter("login-user", "/login", "limit", "5/1h", "key", "param:username,ip",
                        "trusted-proxies", "127.0.0.1", "store", store(store), "timeout", "2s");
        String alice = "alice-" + UUID.randomUUID(); // the shared Redis outlives the test
        String bob = "bob-" + UUID.randomUUID();
        try (var running = container.start(app)) {
            Http.awaitDecided("GET", running.uri("/login?username=warm-up-" + UUID.randomUUID()), "X-Forwarded-For",
                    "192.0.2.99");
            for (int i = 0; i < 3; i++) {
                assertThat(attempt(running, alice, "203.0.113.1")).isEqualTo(200);
            }
            assertThat(attempt(running, alice, "203.0.113.1")).as("alice from A, 4th").isEqualTo(429);
            assertThat(attempt(running, bob, "203.0.113.1")).as("bob behind the same address").isEqualTo(200);
            // Address A did not lock alice out: from B she has a budget of her own...
            assertThat(attempt(running, alice, "203.0.113.2")).as("alice from B").isEqualTo(200);
            assertThat(attempt(running, alice, "203.0.113.2")).as("alice from B").isEqualTo(200);
            // ...but one user is counted across addresses by the per-user limit: 3 + 2 of 5.
            assertThat(attempt(running, alice, "203.0.113.3")).as("alice from C").isEqualTo(429);
            assertThat(attempt(running, bob, "203.0.113.3")).as("bob from C").isEqualTo(200);
            // Without the user name, the next alternative (ip) pays.
            assertThat(get(running.uri("/login"), "X-Forwarded-For", "203.0.113.1").statusCode()).isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aGlobalKeyAdmitsExactlyNAcrossThreeInstancesSharingRedis(Container container) throws Exception {
        String policy = "global-" + UUID.randomUUID();
        List<TestApp.Running> instances = new ArrayList<>();
        List<RedisStore> stores = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                RedisStore store = RedisStore.connect(TestRedis.shared().url()); // a Redis client per instance
                stores.add(store);
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of(policy, "10/1h")).store(store)
                        .timeout(java.time.Duration.ofSeconds(2)).build();
                // A store connects on a thread of its own: wait (bounded) until it decides, as another caller.
                long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
                while (limiter.decide("warm-up").outcome() == Decision.Outcome.FAILED_OPEN
                        && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                instances.add(container.start(new TestApp().programmatic("cap", new RateLimitFilter(limiter)
                        .withKey("global").withTrustedProxies("127.0.0.1"), "/*")));
            }
            int admitted = 0;
            for (int i = 0; i < 30; i++) {
                HttpResponse<String> response = get(instances.get(i % 3).uri("/export"), "X-Forwarded-For",
                        "203.0.113." + (i + 1)); // every request from another client: one budget for them all
                assertThat(response.statusCode()).isIn(200, 429);
                admitted += response.statusCode() == 200 ? 1 : 0;
            }
            assertThat(admitted).isEqualTo(10);
        } finally {
            instances.forEach(TestApp.Running::close);
            stores.forEach(RedisStore::close);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void anExemptAddressNeverSeesA429AndGetsNoHeaders(Container container, String store) throws Exception {
        String policy = "exempt-" + UUID.randomUUID();
        TestApp app = new TestApp()
                .filter("behind-proxy", "/proxied/*", "policy", policy + "-p", "limit", "2/1h",
                        "trusted-proxies", "127.0.0.1", "exempt", "198.51.100.0/24, 2001:db8::/32",
                        "store", store(store), "timeout", "2s")
                .filter("no-proxy", "/direct/*", "policy", policy + "-d", "limit", "2/1h",
                        "exempt", "198.51.100.0/24", "store", store(store), "timeout", "2s");
        try (var running = container.start(app)) {
            URI proxied = running.uri("/proxied/x");
            Http.awaitDecided("GET", proxied, "X-Forwarded-For", "192.0.2.99");
            for (String client : List.of("198.51.100.7", "2001:db8:1::5")) {
                for (int i = 0; i < 10; i++) {
                    HttpResponse<String> response = get(proxied, "X-Forwarded-For", client);
                    assertThat(response.statusCode()).as("%s, request %d", client, i).isEqualTo(200);
                    assertThat(hasRateLimitHeaders(response)).isFalse();
                }
            }
            assertThat(get(proxied, "X-Forwarded-For", "203.0.113.5").statusCode()).isEqualTo(200);
            assertThat(hasRateLimitHeaders(get(proxied, "X-Forwarded-For", "203.0.113.5"))).isTrue();
            assertThat(get(proxied, "X-Forwarded-For", "203.0.113.5").statusCode()).isEqualTo(429);
            // The same rules as ip: from an untrusted peer, X-Forwarded-For is the client's word, not believed.
            URI direct = running.uri("/direct/x");
            assertThat(get(direct, "X-Forwarded-For", "198.51.100.7").statusCode()).isEqualTo(200);
            assertThat(get(direct, "X-Forwarded-For", "198.51.100.7").statusCode()).isEqualTo(200);
            assertThat(get(direct, "X-Forwarded-For", "198.51.100.7").statusCode()).isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void onlyTheNamedMethodsAreLimited(Container container, String store) throws Exception {
        String policy = "writes-" + UUID.randomUUID();
        TestApp app = new TestApp().filter("writes", "/*", "policy", policy, "limit", "1/1h", "methods", "POST,put",
                "key", "header:X-Client", "store", store(store), "timeout", "2s");
        try (var running = container.start(app)) {
            URI uri = running.uri("/orders");
            Http.awaitDecided("POST", uri, "X-Client", "warm-up");
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> read = get(uri, "X-Client", "c");
                assertThat(read.statusCode()).isEqualTo(200);
                assertThat(hasRateLimitHeaders(read)).isFalse();
            }
            HttpResponse<String> post = HttpCalls.send("POST", uri, "X-Client", "c");
            assertThat(post.statusCode()).isEqualTo(200);
            assertThat(header(post, "RateLimit-Remaining")).isEqualTo("0");
            assertThat(HttpCalls.send("PUT", uri, "X-Client", "c").statusCode()).isEqualTo(429);
            HttpResponse<String> delete = HttpCalls.send("DELETE", uri, "X-Client", "c");
            assertThat(delete.statusCode()).isEqualTo(200);
            assertThat(hasRateLimitHeaders(delete)).isFalse();
        }
    }

    /** HttpServlet.doHead runs doGet: a route limiting GET limits HEAD with it, in one budget. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void methodsNamingGetCoverHead(Container container, String store) throws Exception {
        String policy = "reads-" + UUID.randomUUID();
        TestApp app = new TestApp().filter("reads", "/*", "policy", policy, "limit", "2/1h", "methods", "GET",
                "key", "header:X-Client", "store", store(store), "timeout", "2s");
        try (var running = container.start(app)) {
            URI uri = running.uri("/page");
            Http.awaitDecided("GET", uri, "X-Client", "warm-up");
            assertThat(get(uri, "X-Client", "c").statusCode()).isEqualTo(200);
            assertThat(HttpCalls.send("HEAD", uri, "X-Client", "c").statusCode()).isEqualTo(200);
            assertThat(HttpCalls.send("HEAD", uri, "X-Client", "c").statusCode()).isEqualTo(429);
            assertThat(get(uri, "X-Client", "c").statusCode()).isEqualTo(429);
            HttpResponse<String> post = HttpCalls.send("POST", uri, "X-Client", "c");
            assertThat(post.statusCode()).isEqualTo(200);
            assertThat(hasRateLimitHeaders(post)).isFalse();
        }
    }

    /** WebDAV's methods and QUERY are method tokens like any other. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void methodsTakesAnyMethodToken(Container container) throws Exception {
        TestApp app = new TestApp().filter("dav", "/*", "limit", "1/1h", "methods", "PROPFIND,query",
                "key", "header:X-Client");
        try (var running = container.start(app)) {
            URI uri = running.uri("/files");
            assertThat(HttpCalls.send("PROPFIND", uri, "X-Client", "c").statusCode()).isEqualTo(200);
            assertThat(HttpCalls.send("QUERY", uri, "X-Client", "c").statusCode()).isEqualTo(429);
            assertThat(get(uri, "X-Client", "c").statusCode()).isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aLimitResolverChoosesTheLimitsInJava(Container container) throws Exception {
        List<Limit> gold = List.of(Limit.of("api.gold", "3/1h"));
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("api", "1/1h")).build();
        RateLimitFilter filter = new RateLimitFilter(limiter).withKey("header:X-Client")
                .withLimitResolver(request -> switch (String.valueOf(request.header("X-Plan"))) {
                    case "gold" -> gold;
                    case "staff" -> List.of();
                    default -> null;
                });
        try (var running = container.start(new TestApp().programmatic("api", filter, "/*"))) {
            URI uri = running.uri("/x");
            for (int i = 0; i < 3; i++) {
                assertThat(get(uri, "X-Client", "g", "X-Plan", "gold").statusCode()).isEqualTo(200);
            }
            assertThat(get(uri, "X-Client", "g", "X-Plan", "gold").statusCode()).isEqualTo(429);
            assertThat(get(uri, "X-Client", "f").statusCode()).isEqualTo(200);
            assertThat(get(uri, "X-Client", "f").statusCode()).isEqualTo(429);
            for (int i = 0; i < 5; i++) {
                HttpResponse<String> staff = get(uri, "X-Client", "s", "X-Plan", "staff");
                assertThat(staff.statusCode()).isEqualTo(200);
                assertThat(hasRateLimitHeaders(staff)).isFalse();
            }
        }
    }
}
