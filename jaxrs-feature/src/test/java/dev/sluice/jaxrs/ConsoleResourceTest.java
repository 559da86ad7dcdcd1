package dev.sluice.jaxrs;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.SecurityContext;
import dev.sluice.testing.ForwardingProxy;
import dev.sluice.testing.RawHttp;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Principal;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import static dev.sluice.testing.HttpCalls.sendForm;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JAX-RS console over real HTTP on Jersey: its access rules, and its overrides and resets on {@code @RateLimit}
 * routes.
 */
class ConsoleResourceTest {

    private static final String[] ADMIN = {"X-Test-User", "alice", "X-Test-Roles", "sluice-admin"};

    /** The application's mapping of the console. */
    @Path("sluice")
    public static class Ops extends ConsoleResource {
    }

    /** A login: the user of {@code X-Test-User} in the roles of {@code X-Test-Roles}. */
    @Priority(Priorities.AUTHENTICATION)
    public static class TestLogin implements ContainerRequestFilter {
        @Override
        public void filter(ContainerRequestContext request) {
            String user = request.getHeaderString("X-Test-User");
            if (user == null) {
                return;
            }
            List<String> roles = List.of(String.valueOf(request.getHeaderString("X-Test-Roles")).split(","));
            request.setSecurityContext(new SecurityContext() {
                @Override
                public Principal getUserPrincipal() {
                    return () -> user;
                }

                @Override
                public boolean isUserInRole(String role) {
                    return roles.contains(role);
                }

                @Override
                public boolean isSecure() {
                    return false;
                }

                @Override
                public String getAuthenticationScheme() {
                    return "X-Test";
                }
            });
        }
    }

    private static JerseyApp start() throws Exception {
        return JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class, Ops.class, TestLogin.class)
                .register(RateLimitFeature.class));
    }

    private static String[] with(String[] first, String... more) {
        String[] out = Arrays.copyOf(first, first.length + more.length);
        System.arraycopy(more, 0, out, first.length, more.length);
        return out;
    }

    @Test
    void anOverrideSetThroughTheConsoleAppliesToARateLimitRouteAndAResetLetsARefusedCallerIn() throws Exception {
        String client = UUID.randomUUID().toString();
        try (JerseyApp app = start()) {
            URI override = app.uri("/sluice/policies/two-hourly/override");
            String self = "http://" + override.getHost() + ":" + override.getPort();
            HttpResponse<String> listed = sendForm("GET", app.uri("/sluice/policies"), null, ADMIN);
            assertThat(listed.statusCode()).isEqualTo(200);
            assertThat(listed.body()).contains("\"name\":\"two-hourly\"", "\"limit\":\"5/1h\"", "\"override\":null",
                    "\"key\":\"header:X-Client\"", "\"store\":\"memory\"");

            assertThat(app.get("/m/hourly", "X-Client", client).statusCode()).isEqualTo(200);
            HttpResponse<String> set = sendForm("PUT", override, "limit=1/1h", with(ADMIN, "Origin", self,
                    "Sec-Fetch-Site", "same-origin"));
            assertThat(set.statusCode()).isEqualTo(200);
            assertThat(set.body()).contains("\"by\":\"alice\"");
            HttpResponse<String> refused = app.get("/m/hourly", "X-Client", client);
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(refused.headers().firstValue("RateLimit-Limit")).hasValue("1");

            HttpResponse<String> reset = sendForm("POST", app.uri("/sluice/policies/two-hourly/reset"),
                    "caller=" + client,
                    with(ADMIN, "Origin", self));
            assertThat(reset.statusCode()).isEqualTo(200);
            assertThat(reset.body()).contains("key~" + client);
            assertThat(app.get("/m/hourly", "X-Client", client).statusCode()).isEqualTo(200);

            assertThat(sendForm("DELETE", override, null, ADMIN).statusCode()).isEqualTo(200);
            assertThat(app.get("/m/hourly", "X-Client", client).headers().firstValue("RateLimit-Limit")).hasValue("5");
        }
    }

    @Test
    void strangersWrongRolesAndOtherSitesAreRefusedABadOverrideChangesNothingAndThePageIsServed() throws Exception {
        try (JerseyApp app = start()) {
            URI policies = app.uri("/sluice/policies");
            URI override = app.uri("/sluice/policies/two-hourly/override");
            assertThat(sendForm("GET", policies, null).statusCode()).isEqualTo(401);
            assertThat(sendForm("GET", policies, null, "X-Test-User", "bob", "X-Test-Roles", "user").statusCode())
                    .isEqualTo(403);
            assertThat(sendForm("PUT", override, "limit=9/1m", "X-Test-User", "bob", "X-Test-Roles", "user")
                    .statusCode())
                    .isEqualTo(403);
            assertThat(sendForm("PUT", override, "limit=9/1m", with(ADMIN, "Origin", "http://evil.example"))
                    .statusCode())
                    .isEqualTo(403);
            assertThat(sendForm("PUT", override, "limit=9/1m", with(ADMIN, "Sec-Fetch-Site", "cross-site"))
                    .statusCode())
                    .isEqualTo(403);
            assertThat(sendForm("POST", app.uri("/sluice/policies/two-hourly/reset"), "caller=k",
                    with(ADMIN, "Sec-Fetch-Site", "same-site")).statusCode()).isEqualTo(403);

            HttpResponse<String> bad = sendForm("PUT", override, "limit=100/minutes", ADMIN);
            assertThat(bad.statusCode()).isEqualTo(400);
            // The JSON escapes < and >, so that no value can close a tag.
            assertThat(bad.body())
                    .isEqualTo("{\"error\":\"'limit' must look like \\u003ccount\\u003e/\\u003cperiod\\u003e "
                    + "(e.g. 100/1m), got '100/minutes'\"}");
            assertThat(sendForm("GET", policies, null, ADMIN).body()).contains("\"override\":null")
                    .doesNotContain("9/1m");
            assertThat(app.get("/m/hourly", "X-Client", UUID.randomUUID().toString()).headers()
                    .firstValue("RateLimit-Limit")).hasValue("5");

            HttpResponse<String> page = sendForm("GET", app.uri("/sluice/"), null, ADMIN);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.headers().firstValue("Content-Security-Policy").orElse(""))
                    .startsWith("default-src 'self'");
            assertThat(page.body()).contains("<script src=\"console.js\"");
            assertThat(sendForm("GET", app.uri("/sluice/console.js"), null, ADMIN).statusCode()).isEqualTo(200);
            HttpResponse<String> bare = sendForm("GET", app.uri("/sluice"), null, ADMIN);
            assertThat(bare.statusCode()).isEqualTo(302);
            assertThat(bare.headers().firstValue("Location").orElse("")).endsWith("/sluice/");
        }
    }

    @Test
    void theRoleIsConfigurableAndAuthenticationIsLiftedOnlyExplicitly() throws Exception {
        try (JerseyApp app =
                JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class, Ops.class, TestLogin.class)
                .register(RateLimitFeature.class).property(ConsoleResource.ROLE, "ops"))) {
            URI policies = app.uri("/sluice/policies");
            assertThat(sendForm("GET", policies, null, ADMIN).statusCode()).isEqualTo(403);
            assertThat(sendForm("GET", policies, null, "X-Test-User", "carol", "X-Test-Roles", "ops").statusCode())
                    .isEqualTo(200);
        }
        try (JerseyApp app = JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class, Ops.class)
                .register(RateLimitFeature.class).property(ConsoleResource.AUTHENTICATION, "none"))) {
            assertThat(sendForm("GET", app.uri("/sluice/policies"), null).body()).contains("\"name\":\"two-hourly\"");
        }
        assertThatThrownBy(() -> JerseyApp.start(new ResourceConfig(Ops.class).register(RateLimitFeature.class)
                .property(ConsoleResource.AUTHENTICATION, "off")).close())
                .satisfies(thrown -> assertThat(messages(thrown)).contains(
                        "JAX-RS property 'sluice.console.authentication' must be required or none, got 'off'"));
    }

    @Test
    void withoutAuthenticationOnlyALoopbackHostOrAnAllowedOneIsServedAndTheRedirectStaysOnTheSite() throws Exception {
        try (JerseyApp app = JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class, Ops.class)
                .register(RateLimitFeature.class).property(ConsoleResource.AUTHENTICATION, "none")
                .property("sluice.console.allowed-hosts", "console.internal"))) {
            int port = app.uri("/").getPort();
            for (String host : List.of("127.0.0.1:" + port, "localhost", "console.internal:" + port)) {
                assertThat(RawHttp.send(port, "GET", "/sluice/policies", host, null).status()).as(host).isEqualTo(200);
            }
            for (String host : List.of("evil.example", "evil.example:" + port)) {
                RawHttp.Response refused = RawHttp.send(port, "PUT", "/sluice/policies/two-hourly/override", host,
                        "limit=9/1h");
                assertThat(refused.status()).as(host).isEqualTo(403);
                assertThat(refused.body()).contains("'sluice.console.allowed-hosts'");
            }
            RawHttp.Response redirect = RawHttp.send(port, "GET", "/sluice", "127.0.0.1:" + port, null);
            assertThat(redirect.status()).isEqualTo(302);
            assertThat(app.uri("/sluice").resolve(redirect.header("Location"))).isEqualTo(app.uri("/sluice/"));
        }
        assertThatThrownBy(() -> JerseyApp.start(new ResourceConfig(Ops.class).register(RateLimitFeature.class)
                .property(ConsoleResource.AUTHENTICATION, "none")
                .property("sluice.console.allowed-hosts", "console.internal:8080")).close())
                .satisfies(thrown -> assertThat(messages(thrown)).contains("'sluice.console.allowed-hosts'",
                        "'console.internal:8080'"));
    }

    @Test
    void behindATrustedProxyThatEndsTlsThePagesOwnChangesAreSameOrigin() throws Exception {
        try (JerseyApp app =
                JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class, Ops.class, TestLogin.class)
                .register(RateLimitFeature.class).property("sluice.trusted-proxies", "127.0.0.2"));
             ForwardingProxy proxy = ForwardingProxy.start(app.uri("/").getPort(), InetAddress.getByName("127.0.0.2"),
                     List.of("X-Forwarded-For: {client}", "X-Forwarded-Proto: https"))) {
            String front = "127.0.0.1:" + proxy.port();
            String[] admin = {"X-Test-User: alice", "X-Test-Roles: sluice-admin"};
            RawHttp.Response set = RawHttp.send(proxy.port(), "PUT", "/sluice/policies/two-hourly/override", front,
                    "limit=9/1h", admin[0], admin[1], "Origin: https://" + front);
            assertThat(set.status()).as(set.body()).isEqualTo(200);
            assertThat(RawHttp.send(proxy.port(), "DELETE", "/sluice/policies/two-hourly/override", front, null,
                    admin[0], admin[1], "Origin: http://" + front).status()).isEqualTo(403);
            int port = app.uri("/").getPort();
            String direct = "127.0.0.1:" + port;
            assertThat(RawHttp.send(port, "DELETE", "/sluice/policies/two-hourly/override", direct, null,
                    admin[0], admin[1], "Origin: https://" + direct, "X-Forwarded-Proto: https").status())
                    .as("a forwarding header from a peer that is no trusted proxy").isEqualTo(403);
            assertThat(RawHttp.send(port, "DELETE", "/sluice/policies/two-hourly/override", direct, null,
                    admin[0], admin[1], "Origin: http://" + direct).status()).isEqualTo(200);
        }
    }

    private static String messages(Throwable thrown) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = thrown; t != null; t = t.getCause() == t ? null : t.getCause()) {
            all.append(t.getMessage()).append(" | ");
        }
        return all.toString();
    }
}
