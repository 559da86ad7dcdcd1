package dev.sluice.servlet;

import dev.sluice.testing.TestRedis;
import dev.sluice.web.PolicyRegistry;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static dev.sluice.testing.HttpCalls.sendForm;
import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

/** The console over real HTTP: its access rules, its JSON API, and overrides and resets across instances on one Redis. */
class ConsoleTest {

    private static final String[] ADMIN = {"X-Test-User", "alice", "X-Test-Roles", "sluice-admin"};

    /**
     * A login for tests: the user of header {@code X-Test-User} in the roles of {@code X-Test-Roles},
     * as a container's authentication would set them.
     */
    static final class TestLogin implements Filter {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
            HttpServletRequest request = (HttpServletRequest) req;
            String user = request.getHeader("X-Test-User");
            if (user == null) {
                chain.doFilter(req, res);
                return;
            }
            List<String> roles = List.of(String.valueOf(request.getHeader("X-Test-Roles")).split(","));
            chain.doFilter(new HttpServletRequestWrapper(request) {
                @Override
                public Principal getUserPrincipal() {
                    return () -> user;
                }

                @Override
                public String getRemoteUser() {
                    return user;
                }

                @Override
                public boolean isUserInRole(String role) {
                    return roles.contains(role);
                }
            }, res);
        }
    }

    private static TestApp app(String store, String limit) {
        return new TestApp()
                .filter("api", "/api/*", "policy", "api", "limit", limit, "key", "header:X-API-Key", "store", store,
                        "timeout", "2s")
                .instance("login", new TestLogin(), "/sluice/*")
                .servlet("/sluice/*", new ConsoleServlet());
    }

    private static Container container() {
        return Container.selected().get(0);
    }

    private static String[] with(String[] first, String... more) {
        String[] out = java.util.Arrays.copyOf(first, first.length + more.length);
        System.arraycopy(more, 0, out, first.length, more.length);
        return out;
    }

    @Test
    void strangersWrongRolesAndOtherSitesAreRefusedABadOverrideChangesNothingAndThePageIsServed() throws Exception {
        try (var running = container().start(app("memory", "2/1h"))) {
            URI policies = running.uri("/sluice/policies");
            URI override = running.uri("/sluice/policies/api/override");
            assertThat(get(policies).statusCode()).isEqualTo(401);
            assertThat(get(policies, "X-Test-User", "bob", "X-Test-Roles", "user").statusCode()).isEqualTo(403);
            assertThat(sendForm("PUT", override, "limit=9/1m", "X-Test-User", "bob", "X-Test-Roles", "user").statusCode())
                    .isEqualTo(403);

            HttpResponse<String> listed = get(policies, ADMIN);
            assertThat(listed.statusCode()).isEqualTo(200);
            assertThat(listed.body()).contains("\"name\":\"api\"", "\"limit\":\"2/1h\"", "\"override\":null",
                    "\"key\":\"header:X-API-Key\"", "\"store\":\"memory\"");

            String self = "http://" + override.getHost() + ":" + override.getPort();
            assertThat(sendForm("PUT", override, "limit=9/1m", with(ADMIN, "Origin", "http://evil.example")).statusCode())
                    .isEqualTo(403);
            assertThat(sendForm("PUT", override, "limit=9/1m", with(ADMIN, "Sec-Fetch-Site", "cross-site")).statusCode())
                    .isEqualTo(403);
            assertThat(sendForm("POST", running.uri("/sluice/policies/api/reset"), "caller=k",
                    with(ADMIN, "Sec-Fetch-Site", "same-site")).statusCode()).isEqualTo(403);
            HttpResponse<String> bad = sendForm("PUT", override, "limit=100/minutes", with(ADMIN, "Origin", self));
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(Http.json(bad)).containsEntry("error",
                    "'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'");
            assertThat(get(policies, ADMIN).body()).contains("\"override\":null").doesNotContain("9/1m");
            assertThat(header(get(running.uri("/api/x"), "X-API-Key", "k"), "RateLimit-Limit")).isEqualTo("2");

            HttpResponse<String> page = get(running.uri("/sluice/"), ADMIN);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(header(page, "Content-Security-Policy")).startsWith("default-src 'self'");
            assertThat(page.body()).contains("<script src=\"console.js\"").doesNotContain("<script>", "style=");
            assertThat(get(running.uri("/sluice/console.js"), ADMIN).statusCode()).isEqualTo(200);
            assertThat(get(running.uri("/sluice/console.css"), ADMIN).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aConsoleBehindARateLimitFilterRefusesToServe() throws Exception {
        TestApp app = new TestApp().filter("everything", "/*", "limit", "100/1m")
                .instance("login", new TestLogin(), "/sluice/*")
                .servlet("/sluice/*", new ConsoleServlet());
        try (var running = container().start(app)) {
            HttpResponse<String> refused = get(running.uri("/sluice/policies"), ADMIN);
            assertThat(refused.statusCode()).isEqualTo(500);
            assertThat(refused.body()).contains("behind a rate-limit filter");
        }
    }

    @Test
    void onTheMemoryStoreAnOverrideAndAResetWorkThroughTheConsole() throws Exception {
        try (var running = container().start(app("memory", "2/1h"))) {
            String key = "k-" + UUID.randomUUID();
            URI api = running.uri("/api/x");
            assertThat(get(api, "X-API-Key", key).statusCode()).isEqualTo(200);
            assertThat(get(api, "X-API-Key", key).statusCode()).isEqualTo(200);
            assertThat(get(api, "X-API-Key", key).statusCode()).isEqualTo(429);
            HttpResponse<String> reset = sendForm("POST", running.uri("/sluice/policies/api/reset"), "caller=" + key, ADMIN);
            assertThat(reset.statusCode()).isEqualTo(200);
            assertThat(reset.body()).contains("key~" + key);
            assertThat(get(api, "X-API-Key", key).statusCode()).isEqualTo(200);

            HttpResponse<String> set = sendForm("PUT", running.uri("/sluice/policies/api/override"), "limit=5/1h", ADMIN);
            assertThat(set.statusCode()).isEqualTo(200);
            assertThat(set.body()).contains("\"by\":\"alice\"");
            assertThat(header(get(api, "X-API-Key", "fresh"), "RateLimit-Limit")).isEqualTo("5");
            assertThat(sendForm("DELETE", running.uri("/sluice/policies/api/override"), null, ADMIN).statusCode()).isEqualTo(200);
            assertThat(header(get(api, "X-API-Key", "fresh"), "RateLimit-Limit")).isEqualTo("2");
            assertThat(get(running.uri("/sluice/policies"), ADMIN).body()).contains("\"rejected\":1");
        }
    }

    @Test
    void threeInstancesOnOneRedisApplyAnOverrideWithinTheRefreshRevertWhenClearedAndLetAResetCallerIn()
            throws Exception {
        String url = TestRedis.shared().url();
        // Three store values naming one database: three Redisson clients, three local rejection copies.
        List<String> stores = List.of(url, url + "/", url + "/0");
        String policyKey = "k-" + UUID.randomUUID();
        try (var one = container().start(app(stores.get(0), "3/1h"));
             var two = container().start(app(stores.get(1), "3/1h"));
             var three = container().start(app(stores.get(2), "3/1h"))) {
            List<TestApp.Running> all = List.of(one, two, three);
            for (TestApp.Running node : all) {
                Http.awaitDecided("GET", node.uri("/api/x"), "X-API-Key", "warm-" + UUID.randomUUID());
            }
            try {
                long set = System.nanoTime();
                assertThat(sendForm("PUT", one.uri("/sluice/policies/api/override"), "limit=50/1h", ADMIN).statusCode())
                        .isEqualTo(200);
                long slowest = 0;
                for (TestApp.Running node : all) {
                    slowest = Math.max(slowest, awaitLimit(node, "50", set));
                }
                System.out.printf("override applied on all three instances after %d ms%n", slowest / 1_000_000);
                assertThat(Duration.ofNanos(slowest)).isLessThan(Duration.ofSeconds(PolicyRegistry.REFRESH_SECONDS + 3));
                assertThat(get(two.uri("/sluice/policies"), ADMIN).body()).contains("\"limit\":\"50/1h\"",
                        "\"by\":\"alice\"");

                long cleared = System.nanoTime();
                assertThat(sendForm("DELETE", two.uri("/sluice/policies/api/override"), null, ADMIN).statusCode())
                        .isEqualTo(200);
                slowest = 0;
                for (TestApp.Running node : all) {
                    slowest = Math.max(slowest, awaitLimit(node, "3", cleared));
                }
                System.out.printf("override cleared on all three instances after %d ms%n", slowest / 1_000_000);
                assertThat(Duration.ofNanos(slowest)).isLessThan(Duration.ofSeconds(PolicyRegistry.REFRESH_SECONDS + 3));
            } finally {
                sendForm("DELETE", one.uri("/sluice/policies/api/override"), null, ADMIN);
            }

            // The caller spends its 3, then each instance refuses it (and keeps a local copy of the rejection).
            for (TestApp.Running node : all) {
                assertThat(get(node.uri("/api/x"), "X-API-Key", policyKey).statusCode()).isEqualTo(200);
            }
            for (TestApp.Running node : all) {
                assertThat(get(node.uri("/api/x"), "X-API-Key", policyKey).statusCode()).isEqualTo(429);
            }
            long reset = System.nanoTime();
            HttpResponse<String> done = sendForm("POST", three.uri("/sluice/policies/api/reset"), "caller=" + policyKey, ADMIN);
            assertThat(done.statusCode()).isEqualTo(200);
            // At once where it was reset; elsewhere once the local copy of the rejection lapses (1 s at most).
            assertThat(get(three.uri("/api/x"), "X-API-Key", policyKey).statusCode()).isEqualTo(200);
            long slowest = 0;
            for (TestApp.Running node : List.of(one, two)) {
                HttpResponse<String> answer = get(node.uri("/api/x"), "X-API-Key", policyKey);
                while (answer.statusCode() == 429 && System.nanoTime() - reset < Duration.ofSeconds(5).toNanos()) {
                    Thread.sleep(50); // refused locally: costs the caller nothing
                    answer = get(node.uri("/api/x"), "X-API-Key", policyKey);
                }
                assertThat(answer.statusCode()).isEqualTo(200);
                slowest = Math.max(slowest, System.nanoTime() - reset);
            }
            System.out.printf("reset caller let in on all three instances after %d ms%n", slowest / 1_000_000);
            assertThat(Duration.ofNanos(slowest)).isLessThan(Duration.ofMillis(1000 + 2000));
        }
    }

    /**
     * A change the console refuses before reading its body (a stranger's, a wrong role's, another
     * site's) must not leave the client a connection that looks reusable but is not: the
     * container drops a connection whose request body was left unread, so such an answer says
     * {@code Connection: close}. Seen as a flake on a busy machine, where the body of the JDK
     * client's {@code PUT} arrived after the refusal and the next request on the pooled
     * connection failed; here the body is held back until the answer is in, over a raw socket.
     */
    @Test
    void aRefusedChangeWhoseBodyCameLateLeavesNoConnectionThatLooksReusable() throws Exception {
        try (var running = container().start(app("memory", "2/1h"))) {
            URI override = running.uri("/sluice/policies/api/override");
            String host = override.getHost() + ":" + override.getPort();
            String form = "limit=9/1m";
            List<String[]> refusals = List.of(new String[0], new String[] {"X-Test-User", "bob", "X-Test-Roles", "user"},
                    with(ADMIN, "Origin", "http://evil.example"));
            for (String[] who : refusals) {
                try (java.net.Socket socket = new java.net.Socket(override.getHost(), override.getPort())) {
                    socket.setSoTimeout(10_000);
                    var out = socket.getOutputStream();
                    var in = new java.io.BufferedInputStream(socket.getInputStream());
                    StringBuilder request = new StringBuilder("PUT " + override.getRawPath() + " HTTP/1.1\r\nHost: " + host
                            + "\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " + form.length() + "\r\n");
                    for (int i = 0; i < who.length; i += 2) {
                        request.append(who[i]).append(": ").append(who[i + 1]).append("\r\n");
                    }
                    out.write(request.append("\r\n").toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                    out.flush();
                    String refused = readResponse(in);
                    assertThat(refused).as("refused before its body came").matches("(?s)HTTP/1.1 40[13] .*");
                    if (refused.toLowerCase(java.util.Locale.ROOT).contains("\r\nconnection: close\r\n")) {
                        continue; // said: the client opens a new connection for its next request
                    }
                    // not said: the connection must serve the next request once the body is in
                    out.write((form + "GET /sluice/policies HTTP/1.1\r\nHost: " + host + "\r\nX-Test-User: alice\r\n"
                            + "X-Test-Roles: sluice-admin\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                    out.flush();
                    String next;
                    try {
                        next = readResponse(in);
                    } catch (java.io.IOException e) {
                        next = e.toString();
                    }
                    assertThat(next).as("the next request on a connection kept alive after '%s'",
                            refused.lines().findFirst().orElse("")).startsWith("HTTP/1.1 200 ");
                }
            }
        }
    }

    /** One HTTP/1.1 response with a {@code Content-Length} (the console's), head and body; "EOF" if the connection ended first. */
    private static String readResponse(java.io.InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        int c;
        while (!head.toString().endsWith("\r\n\r\n")) {
            c = in.read();
            if (c < 0) {
                return "EOF after '" + head + "'";
            }
            head.append((char) c);
        }
        java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)\r\ncontent-length: *(\\d+)").matcher(head);
        byte[] body = length.find() ? in.readNBytes(Integer.parseInt(length.group(1))) : new byte[0];
        return head + new String(body, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** Polls {@code node} with fresh callers until it reports {@code limit}; returns the nanoseconds since {@code since}. */
    private static long awaitLimit(TestApp.Running node, String limit, long since) throws InterruptedException {
        long deadline = since + Duration.ofSeconds(PolicyRegistry.REFRESH_SECONDS + 10).toNanos();
        while (System.nanoTime() < deadline) {
            String seen = header(get(node.uri("/api/x"), "X-API-Key", "probe-" + UUID.randomUUID()), "RateLimit-Limit");
            if (limit.equals(seen)) {
                return System.nanoTime() - since;
            }
            Thread.sleep(25);
        }
        throw new AssertionError(node.uri("/") + " never reported RateLimit-Limit " + limit);
    }
}
