package dev.sluice.jaxrs;

import dev.sluice.testing.HttpCalls;
import dev.sluice.testing.ResettingClient;
import dev.sluice.testing.TestRedis;
import jakarta.servlet.DispatcherType;
import jakarta.ws.rs.core.Application;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.EnumSet;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the feature promises on any JAX-RS runtime, over real HTTP: one subclass per runtime says
 * only how that runtime's servlet is set up. The runtime is started once per class, in a Jetty 12
 * EE11 context on 127.0.0.1, with two applications ({@link ContractApps}): {@code /api} deciding on
 * a real Redis, {@code /down} on a Redis URL where nothing listens. A servlet filter logs the
 * {@code X-User} header in as the request's user principal. Each subclass runs in a JVM whose class
 * path holds its runtime only (see the failsafe executions in this module's pom); tagged
 * {@value #TAG} so that surefire, whose class path has Jersey only, never runs them, not even when
 * {@code -Dtest} names them.
 */
@Tag(JaxRsContract.TAG)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JaxRsContract {

    /** The JUnit tag of the runtime contract classes. */
    static final String TAG = "jaxrs-runtime";

    private Server server;
    private URI base;

    /**
     * The runtime's servlet serving {@code application} (named by class, as in {@code web.xml}) at
     * {@code prefix + "/*"}; initialised at start, so that a deployment failure fails the class.
     */
    abstract ServletHolder servlet(Class<? extends Application> application, String prefix);

    @BeforeAll
    void start() throws Exception {
        ContractApps.configure(TestRedis.shared().url(), "redis://127.0.0.1:" + TestRedis.freePort());
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        FilterHolder login = new FilterHolder(ContractApps.HeaderLogin.class);
        login.setAsyncSupported(true);
        context.addFilter(login, "/*", EnumSet.of(DispatcherType.REQUEST));
        context.addFilter(new FilterHolder(new ContractApps.TenantLogin()), "/*", EnumSet.of(DispatcherType.REQUEST));
        for (var app : new Object[][] {{ContractApps.Limited.class, "/api"}, {ContractApps.StoreDown.class, "/down"},
                {ContractApps.Fit.class, "/fit"}}) {
            @SuppressWarnings("unchecked")
            ServletHolder holder = servlet((Class<? extends Application>) app[0], (String) app[1]);
            holder.setInitOrder(0);
            holder.setAsyncSupported(true); // @Suspended resources
            context.addServlet(holder, app[1] + "/*");
        }
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception | Error e) {
            server.stop();
            throw e;
        }
        if (!context.isAvailable()) {
            server.stop();
            throw new IllegalStateException("the application did not become available");
        }
        base = URI.create("http://127.0.0.1:" + connector.getLocalPort());
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null) {
            server.stop();
        }
    }

    private HttpResponse<String> get(String path, String... headers) {
        return HttpCalls.send("GET", base.resolve(path), headers);
    }

    private static String client() {
        return UUID.randomUUID().toString();
    }

    private static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
    }

    @Test
    void allowedRequestsCarryTheHeadersAndTheRejectedOneIsA429Problem() {
        String me = client();
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> ok = get("/api/m/three", "X-Client", me);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("three");
            assertThat(header(ok, "RateLimit-Limit")).isEqualTo("3");
            assertThat(header(ok, "RateLimit-Remaining")).isEqualTo(Integer.toString(3 - i));
            assertThat(Long.parseLong(header(ok, "RateLimit-Reset"))).isBetween(1L, 60L);
        }
        HttpResponse<String> rejected = get("/api/m/three", "X-Client", me);
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(header(rejected, "Content-Type")).startsWith("application/problem+json");
        assertThat(rejected.body()).contains("\"status\":429").contains("\"title\":\"Too Many Requests\"")
                .contains("\"policy\":\"MethodLimited.three~460f24d5\"");
        assertThat(Long.parseLong(header(rejected, "Retry-After"))).isBetween(1L, 20L);
        assertThat(header(rejected, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(header(rejected, "RateLimit-Limit")).isEqualTo("3");

        // Another caller has its own budget; an un-annotated method has none.
        assertThat(get("/api/m/three", "X-Client", client()).statusCode()).isEqualTo(200);
        HttpResponse<String> free = get("/api/m/free", "X-Client", me);
        assertThat(free.statusCode()).isEqualTo(200);
        assertThat(header(free, "RateLimit-Limit")).isNull();
    }

    @Test
    void anAttributeTheApplicationSetKeysTheCallerAndItsMapperWritesThe429WithSluicesHeaders() {
        String tenant = client();
        HttpResponse<String> ok = get("/fit/fit/tenant", "X-Tenant", tenant);
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.body()).matches("ok allowed fit-tenant 0 :[A-Za-z0-9+/]{16}:");
        HttpResponse<String> refused = get("/fit/fit/tenant", "X-Tenant", tenant);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(header(refused, "Content-Type")).startsWith("application/json");
        assertThat(refused.body()).isEqualTo("{\"error\":\"slow down\",\"policy\":\"fit-tenant\",\"remaining\":0}");
        assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 60L);
        assertThat(header(refused, "RateLimit-Limit")).isEqualTo("1");
        assertThat(header(refused, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(get("/fit/fit/tenant", "X-Tenant", client()).statusCode()).as("another tenant").isEqualTo(200);
    }

    @Test
    void twoLimitsOnOneMethodAreAllOrNothing() {
        String me = client();
        HttpResponse<String> first = get("/api/m/two", "X-Client", me);
        assertThat(first.statusCode()).isEqualTo(200);
        // The binding limit is the one with the least left: the minute limit, 1 of 2.
        assertThat(header(first, "RateLimit-Limit")).isEqualTo("2");
        assertThat(header(first, "RateLimit-Remaining")).isEqualTo("1");
        assertThat(get("/api/m/two", "X-Client", me).statusCode()).isEqualTo(200);
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> rejected = get("/api/m/two", "X-Client", me);
            assertThat(rejected.statusCode()).isEqualTo(429);
            assertThat(rejected.body()).contains("\"policy\":\"two-minute\"");
        }
        // The hourly limit (shared by policy name with /m/hourly) lost 2, not 5: the rejected requests
        // consumed nothing.
        HttpResponse<String> hourly = get("/api/m/hourly", "X-Client", me);
        assertThat(hourly.statusCode()).isEqualTo(200);
        assertThat(header(hourly, "RateLimit-Limit")).isEqualTo("5");
        assertThat(header(hourly, "RateLimit-Remaining")).isEqualTo("2");
    }

    @Test
    void aClassAnnotationAppliesToEachMethodAndAMethodAnnotationReplacesIt() {
        String me = client();
        assertThat(header(get("/api/c/a", "X-Client", me), "RateLimit-Limit")).isEqualTo("2");
        assertThat(get("/api/c/a", "X-Client", me).statusCode()).isEqualTo(200);
        assertThat(get("/api/c/a", "X-Client", me).statusCode()).isEqualTo(429);
        for (int i = 1; i <= 4; i++) {
            HttpResponse<String> ok = get("/api/c/b", "X-Client", me);
            assertThat(ok.statusCode()).isEqualTo(200);
            assertThat(header(ok, "RateLimit-Limit")).isEqualTo("4");
        }
        assertThat(get("/api/c/b", "X-Client", me).statusCode()).isEqualTo(429);
    }

    /** The runtime answers HEAD with the @GET method, so methods = "GET" limits HEAD in the same budget. */
    @Test
    void methodsNamingGetLimitHeadToo() {
        String me = client();
        assertThat(get("/api/m/reads", "X-Client", me).statusCode()).isEqualTo(200);
        HttpResponse<String> head = HttpCalls.send("HEAD", base.resolve("/api/m/reads"), "X-Client", me);
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(header(head, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(HttpCalls.send("HEAD", base.resolve("/api/m/reads"), "X-Client", me).statusCode()).isEqualTo(429);
        assertThat(get("/api/m/reads", "X-Client", me).statusCode()).isEqualTo(429);
    }

    @Test
    void principalKeySeesTheUserTheRuntimesSecurityContextReports() {
        String alice = "alice-" + client();
        String bob = "bob-" + client();
        assertThat(get("/api/m/user", "X-User", alice).body()).isEqualTo(alice);
        assertThat(get("/api/m/user", "X-User", alice).statusCode()).isEqualTo(200);
        assertThat(get("/api/m/user", "X-User", alice).statusCode()).isEqualTo(429);
        // Same address, another user: keyed by anything else, both would share one budget.
        HttpResponse<String> other = get("/api/m/user", "X-User", bob);
        assertThat(other.statusCode()).isEqualTo(200);
        assertThat(header(other, "RateLimit-Remaining")).isEqualTo("1");
    }

    @Test
    void anAsyncResourceIsLimitedAndGetsTheHeadersOnItsResumedResponse() {
        String me = client();
        HttpResponse<String> first = get("/api/m/async", "X-Client", me);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("async");
        assertThat(header(first, "RateLimit-Limit")).isEqualTo("2");
        assertThat(header(first, "RateLimit-Remaining")).isEqualTo("1");
        assertThat(header(get("/api/m/async", "X-Client", me), "RateLimit-Remaining")).isEqualTo("0");
        HttpResponse<String> rejected = get("/api/m/async", "X-Client", me);
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(header(rejected, "Retry-After"))).isBetween(1L, 60L);
        assertThat(header(rejected, "Content-Type")).startsWith("application/problem+json");
    }

    /**
     * The login recipe against a client that reads the status line of each 401 and resets the
     * connection while the page is still being written: charged, because the response filter
     * settles the request before the entity is written.
     */
    @Test
    void aClientThatResetsAfterTheStatusLineOfA401IsChargedForIt() {
        for (String page : new String[] {"/api/login-page/sync/", "/api/login-page/async/"}) {
            String me = client();
            for (int i = 0; i < 5; i++) {
                assertThat(ResettingClient.statusThenReset(base.resolve(page + "wrong"), "X-Client", me))
                        .as("%swrong %d", page, i + 1).isEqualTo(401);
            }
            assertThat(ResettingClient.statusThenReset(base.resolve(page + "wrong"), "X-Client", me))
                    .as("the sixth attempt after five 401s, each reset after its status line").isEqualTo(429);
            assertThat(ResettingClient.statusThenReset(base.resolve(page + "right"), "X-Client", me))
                    .as("the right password too").isEqualTo(429);
        }
    }

    @Test
    void aClosedRouteWhoseStoreIsDownAnswers503AndAnOpenOnePasses() {
        String me = client();
        HttpResponse<String> closed = get("/down/failure/closed", "X-Client", me);
        assertThat(closed.statusCode()).isEqualTo(503);
        assertThat(Long.parseLong(header(closed, "Retry-After"))).isGreaterThanOrEqualTo(1);
        assertThat(header(closed, "Content-Type")).startsWith("application/problem+json");
        assertThat(closed.body()).contains("\"status\":503");
        HttpResponse<String> open = get("/down/failure/open", "X-Client", me);
        assertThat(open.statusCode()).isEqualTo(200);
        assertThat(open.body()).isEqualTo("open");
        assertThat(header(open, "RateLimit-Limit")).isNull();
    }

    @Test
    void behindATrustedProxyTheForwardedClientIsTheCaller() {
        // The tests call from 127.0.0.1, the trusted proxy: X-Forwarded-For names the caller.
        String caller = randomAddress();
        String other = randomAddress();
        assertThat(get("/api/ip", "X-Forwarded-For", caller).statusCode()).isEqualTo(200);
        HttpResponse<String> second = get("/api/ip", "X-Forwarded-For", caller);
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(header(second, "RateLimit-Remaining")).isEqualTo("0");
        // Walked from the right: the trusted hop 127.0.0.1 is skipped, the caller is the one before it.
        assertThat(get("/api/ip", "X-Forwarded-For", caller + ", 127.0.0.1").statusCode()).isEqualTo(429);
        // Another client behind the same proxy has a budget of its own.
        HttpResponse<String> fresh = get("/api/ip", "X-Forwarded-For", other);
        assertThat(fresh.statusCode()).isEqualTo(200);
        assertThat(header(fresh, "RateLimit-Remaining")).isEqualTo("1");
    }

    /** A random private IPv4 address: one client each, met by other runs only by chance. */
    private static String randomAddress() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return "10." + random.nextInt(256) + "." + random.nextInt(256) + "." + random.nextInt(1, 255);
    }
}
