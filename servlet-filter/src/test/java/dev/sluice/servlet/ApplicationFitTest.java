package dev.sluice.servlet;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import dev.sluice.web.RequestAttributes;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The filter fits the application around it, over real HTTP in Jetty: callers keyed by the
 * application's own identity, refusals rendered by its error page, what was decided on the
 * request for its access log and code, and defaults set once as context-params.
 */
class ApplicationFitTest {

    static Iterable<Container> containers() {
        return Container.selected();
    }

    /**
     * The application's authentication, as far as the limiter cares: {@code X-Tenant} becomes the attribute
     * {@code tenant}.
     */
    public static final class TenantLogin implements Filter {
        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            String tenant = ((HttpServletRequest) request).getHeader("X-Tenant");
            if (tenant != null) {
                request.setAttribute("tenant", tenant);
            }
            chain.doFilter(request, response);
        }
    }

    /**
     * The application: "ok" and what Sluice put on the request; its error page at
     * {@code /rate-limited} writes its own JSON envelope from the same attributes.
     */
    public static final class App extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            Object outcome = req.getAttribute(RequestAttributes.OUTCOME);
            Object policy = req.getAttribute(RequestAttributes.POLICY);
            if (req.getDispatcherType() == DispatcherType.ERROR) {
                resp.setContentType("application/json");
                resp.getWriter().write("{\"error\":\"slow down\",\"status\":"
                        + req.getAttribute("jakarta.servlet.error.status_code") + ",\"outcome\":\"" + outcome
                        + "\",\"policy\":\"" + policy + "\"}");
                return;
            }
            resp.setContentType("text/plain");
            resp.getWriter().write("ok " + outcome + " " + policy + " " + req.getAttribute(RequestAttributes.REMAINING)
                    + " " + req.getAttribute(RequestAttributes.PARTITION));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aRequestAttributeTheApplicationSetKeysTheCaller(Container container) throws Exception {
        TestApp app = new TestApp().servlet(new App())
                .instance("login", new TenantLogin(), "/*")
                .filter("tenants", "/t/*", "limit", "1/1m", "key", "attribute:tenant+ip, ip");
        try (var running = container.start(app)) {
            assertThat(get(running.uri("/t/x"), "X-Tenant", "acme").statusCode()).isEqualTo(200);
            assertThat(get(running.uri("/t/x"), "X-Tenant", "acme").statusCode()).isEqualTo(429);
            assertThat(get(running.uri("/t/x"), "X-Tenant", "globex").statusCode()).as("another tenant").isEqualTo(200);
            assertThat(get(running.uri("/t/x")).statusCode()).as("no tenant: the address alone").isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aFilterBuiltInJavaAsksTheApplicationsKeyResolver(Container container) throws Exception {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("accounts", "1/1m")).store(MemoryStore.create())
                .build();
        RateLimitFilter filter = new RateLimitFilter(limiter)
                .withKeyResolver(request -> request.header("X-Account"));
        TestApp app = new TestApp().servlet(new App()).programmatic("accounts", filter, "/a/*");
        try (var running = container.start(app)) {
            assertThat(get(running.uri("/a/x"), "X-Account", "alice").statusCode()).isEqualTo(200);
            assertThat(get(running.uri("/a/x"), "X-Account", "bob").statusCode()).isEqualTo(200);
            assertThat(get(running.uri("/a/x"), "X-Account", "alice").statusCode()).isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void sendErrorLetsTheApplicationsErrorPageWriteThe429WithSluicesHeaders(Container container) throws Exception {
        TestApp app = new TestApp().servlet(new App()).errorPage(429, "/rate-limited")
                .filter("search", "/s/*", "limit", "1/1m", "reject", "send-error", "headers", "both");
        try (var running = container.start(app)) {
            HttpResponse<String> allowed = get(running.uri("/s/x"));
            assertThat(allowed.body()).startsWith("ok allowed search 0 :");
            HttpResponse<String> refused = get(running.uri("/s/x"));
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(header(refused, "Content-Type")).startsWith("application/json");
            assertThat(refused.body()).isEqualTo("{\"error\":\"slow down\",\"status\":429,\"outcome\":\"rejected\","
                    + "\"policy\":\"search\"}");
            assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 60L);
            assertThat(header(refused, "RateLimit-Remaining")).isEqualTo("0");
            assertThat(header(refused, "RateLimit")).isEqualTo("\"search\";r=0;t=" + header(refused, "Retry-After"));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void anAccessLogRecordsEvery429AndItsPolicyFromTheRequestAttributes(Container container) throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        TestApp app = new TestApp().servlet(new App())
                .accessLog("%U %s %{dev.sluice.outcome}attr %{dev.sluice.policy}attr %{dev.sluice.remaining}attr "
                        + "%{dev.sluice.partition}attr", lines::add)
                .filter("search", "/s/*", "limit", "1/1m", "policy", "search.v1")
                .filter("shadowed", "/shadow/*", "limit", "1/1m", "mode", "shadow");
        try (var running = container.start(app)) {
            get(running.uri("/s/x"));
            get(running.uri("/s/x"));
            get(running.uri("/shadow/x"));
            get(running.uri("/shadow/x"));
            get(running.uri("/free"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (lines.size() < 5 && System.nanoTime() < deadline) {
                Thread.sleep(20); // the log is written after the response
            }
        }
        assertThat(lines).hasSize(5);
        assertThat(lines.get(0)).matches("/s/x 200 allowed search\\.v1 0 :[A-Za-z0-9+/]{16}:");
        assertThat(lines.get(1)).matches("/s/x 429 rejected search\\.v1 0 :[A-Za-z0-9+/]{16}:");
        assertThat(lines.get(1).substring(lines.get(1).lastIndexOf(' '))).as("one caller, one partition key")
                .isEqualTo(lines.get(0).substring(lines.get(0).lastIndexOf(' ')));
        assertThat(lines.get(3)).matches("/shadow/x 200 shadow_rejected shadowed 0 :[A-Za-z0-9+/]{16}:");
        assertThat(lines.get(4)).as("not limited: nothing decided").isEqualTo("/free 200 - - - -");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void contextParamsAreEveryFiltersDefaultsAndAnInitParamOverridesThem(Container container) throws Exception {
        TestApp app = new TestApp()
                .contextParam("sluice.headers", "draft")
                .contextParam("sluice.limit", "2/1m")
                .contextParam("other.setting", "not Sluice's")
                .filter("plain", "/plain/*")
                .filter("own", "/own/*", "headers", "legacy", "limit", "5/1m");
        try (var running = container.start(app)) {
            HttpResponse<String> plain = get(running.uri("/plain/x"));
            assertThat(header(plain, "RateLimit-Policy")).isEqualTo("\"plain\";q=2;w=60");
            assertThat(header(plain, "RateLimit-Limit")).isNull();
            HttpResponse<String> own = get(running.uri("/own/x"));
            assertThat(header(own, "RateLimit-Limit")).isEqualTo("5");
            assertThat(header(own, "RateLimit-Policy")).isNull();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aBadContextParamFailsStartUpNamingIt(Container container) {
        assertThatThrownBy(() -> container.start(new TestApp().contextParam("sluice.timeout", "0ms")
                .filter("search", "/s/*", "limit", "1/1m")).close())
                .hasStackTraceContaining("filter 'search': context-param 'sluice.timeout' must be between 1ms and 1m, "
                        + "got '0ms'");
        assertThatThrownBy(() -> container.start(new TestApp().contextParam("sluice.limt", "1/1m")
                .filter("search", "/s/*", "limit", "1/1m")).close())
                .hasStackTraceContaining(
                        "filter 'search': context-param 'sluice.limt' is not a Sluice parameter; known: ")
                .hasStackTraceContaining("sluice.limit");
        assertThatThrownBy(() -> container.start(new TestApp().contextParam("sluice.policy", "shared")
                .filter("search", "/s/*", "limit", "1/1m")).close())
                .hasStackTraceContaining(
                        "filter 'search': context-param 'sluice.policy' cannot be every filter's default");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void rejectExceptionIsTheJaxRsFeaturesAndARefusedFormFailsStartUp(Container container) {
        assertThatThrownBy(() -> container.start(new TestApp()
                .filter("search", "/s/*", "limit", "1/1m", "reject", "exception")).close())
                .hasStackTraceContaining(
                        "filter 'search': init-param 'reject' must be problem or send-error in a servlet "
                        + "filter ('exception' is for the other adapter), got 'exception'");
        assertThatThrownBy(() -> container.start(new TestApp()
                .filter("search", "/s/*", "limit", "1/1m", "reject", "page")).close())
                .hasStackTraceContaining(
                        "filter 'search': init-param 'reject' must be problem or send-error, got 'page'");
    }
}
