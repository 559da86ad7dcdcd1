package dev.sluice.jaxrs;

import dev.sluice.FailureMode;
import dev.sluice.testing.HttpCalls;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.ServiceUnavailableException;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import org.eclipse.jetty.ee11.servlet.ErrorPageErrorHandler;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The two sides of {@link AdapterParityTest}, each one Jetty 12 EE11 context on 127.0.0.1 serving
 * {@code /<app>/<route>} for every {@link App} and {@link Route}: the servlet side has one
 * {@code dev.sluice.servlet.RateLimitFilter} per limit of the route, configured by init-params
 * only, in front of a servlet answering "ok"; the JAX-RS side has one Jersey application per app,
 * configured by {@code sluice.*} properties, whose {@code @RateLimit} resources say the same.
 */
final class ParityApps {

    /** Callers are told apart by this header, so that runs sharing one Redis never meet. */
    static final String CLIENT = "X-Client";
    private static final String KEY = "header:" + CLIENT;

    private ParityApps() {
    }

    /** The application-wide settings: the filters' init-params and the feature's {@code sluice.*} properties alike. */
    record App(String name, String headers, String store, String timeout, Map<String, String> more) {
        App(String name, String headers, String store, String timeout) {
            this(name, headers, store, timeout, Map.of());
        }

        Map<String, String> settings() {
            Map<String, String> settings = new LinkedHashMap<>(more);
            settings.putAll(Map.of("headers", headers, "store", store, "timeout", timeout));
            return settings;
        }
    }

    /**
     * A route's limits as init-params, one filter each, in order; its JAX-RS twin is the resource
     * at {@code @Path(name)} below, annotated with the same values. Keep the two in step.
     */
    record Route(String name, List<Map<String, String>> limits) {
    }

    static final Route BASIC = new Route("basic", List.of(
            Map.of("policy", "parity", "limit", "3/1m", "key", KEY)));
    static final Route COST = new Route("cost", List.of(
            Map.of("policy", "parity-cost", "limit", "5/1m", "cost", "2", "key", KEY)));
    static final Route REPEATED = new Route("repeated", List.of(
            Map.of("policy", "parity-minute", "limit", "2/1m", "key", KEY),
            Map.of("policy", "parity-hour", "limit", "5/1h", "key", KEY)));
    static final Route CLOSED = new Route("closed", List.of(
            Map.of("policy", "parity-closed", "limit", "3/1m", "key", KEY, "failure-mode", "closed")));
    static final Route OPEN = new Route("open", List.of(
            Map.of("policy", "parity-open", "limit", "3/1m", "key", KEY, "failure-mode", "open")));
    /** The first alternative lacks a part (no X-Absent), so the second, ip and the client, decides. */
    static final Route COMPOSITE = new Route("composite", List.of(
            Map.of("policy", "parity-composite", "limit", "3/1m", "key", "header:X-Absent+ip,ip+" + KEY)));
    static final Route POST_ONLY = new Route("post-only", List.of(
            Map.of("policy", "parity-post", "limit", "3/1m", "key", KEY, "methods", "POST,PUT")));
    static final Route GET_ONLY = new Route("get-only", List.of(
            Map.of("policy", "parity-get", "limit", "3/1m", "key", KEY, "methods", "GET")));
    /** Keyed by the request attribute {@code tenant}, which {@link ClientTenant} sets in front of both sides. */
    static final Route ATTRIBUTE = new Route("attribute", List.of(
            Map.of("policy", "parity-attribute", "limit", "3/1m", "key", "attribute:tenant")));
    static final List<Route> ROUTES = List.of(BASIC, COST, REPEATED, CLOSED, OPEN, COMPOSITE, POST_ONLY, GET_ONLY,
            ATTRIBUTE);

    /**
     * The value of {@code reject} that means "the application writes the refusal": {@code send-error}
     * and an error page for the filters, {@code exception} and an {@code ExceptionMapper} for the
     * feature, both writing {@link #applicationRefusal}.
     */
    static final String APPLICATION_REJECT = "application";

    /** The application's own refusal body, as its error page and its mapper both write it. */
    static String applicationRefusal(int status, Object policy) {
        return "{\"error\":\"slow down\",\"status\":" + status + ",\"policy\":\"" + policy + "\"}";
    }

    @Path("basic")
    public static class Basic {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "parity", limit = "3/1m", key = KEY)
        public String get() {
            return "ok";
        }
    }

    @Path("cost")
    public static class Cost {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "parity-cost", limit = "5/1m", cost = 2, key = KEY)
        public String get() {
            return "ok";
        }
    }

    @Path("repeated")
    public static class Repeated {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "parity-minute", limit = "2/1m", key = KEY)
        @RateLimit(policy = "parity-hour", limit = "5/1h", key = KEY)
        public String get() {
            return "ok";
        }
    }

    @Path("closed")
    public static class Closed {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "parity-closed", limit = "3/1m", key = KEY, failureMode = FailureMode.CLOSED)
        public String get() {
            return "ok";
        }
    }

    @Path("open")
    public static class Open {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "parity-open", limit = "3/1m", key = KEY, failureMode = FailureMode.OPEN)
        public String get() {
            return "ok";
        }
    }

    @Path("composite")
    public static class Composite {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "parity-composite", limit = "3/1m", key = "header:X-Absent+ip,ip+" + KEY)
        public String get() {
            return "ok";
        }
    }

    @Path("post-only")
    @RateLimit(policy = "parity-post", limit = "3/1m", key = KEY, methods = {"POST", "PUT"})
    public static class PostOnly {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        public String get() {
            return "ok";
        }
    }

    @Path("attribute")
    public static class Attribute {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "parity-attribute", limit = "3/1m", key = "attribute:tenant")
        public String get() {
            return "ok";
        }
    }

    /** The feature's side of {@link #APPLICATION_REJECT}. */
    public static class Refusals implements ExceptionMapper<RateLimitExceededException> {
        @Override
        public Response toResponse(RateLimitExceededException e) {
            return Response.status(e.getResponse().getStatus()).type(MediaType.APPLICATION_JSON)
                    .entity(applicationRefusal(e.getResponse().getStatus(), e.policy())).build();
        }
    }

    /**
     * The feature's side of {@link #APPLICATION_REJECT} for a closed route whose store is down: the policy from the
     * request.
     */
    public static class Unavailable implements ExceptionMapper<ServiceUnavailableException> {
        @Context
        private HttpServletRequest request;

        @Override
        public Response toResponse(ServiceUnavailableException e) {
            return Response.status(e.getResponse().getStatus()).type(MediaType.APPLICATION_JSON)
                    .entity(applicationRefusal(e.getResponse().getStatus(),
                            request.getAttribute(dev.sluice.web.RequestAttributes.POLICY))).build();
        }
    }

    /** The application's login, as far as the limiter cares: {@code X-Client} becomes the attribute {@code tenant}. */
    public static final class ClientTenant implements Filter {
        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            String client = ((HttpServletRequest) request).getHeader(CLIENT);
            if (client != null) {
                request.setAttribute("tenant", client);
            }
            chain.doFilter(request, response);
        }
    }

    @Path("get-only")
    public static class GetOnly {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "parity-get", limit = "3/1m", key = KEY, methods = "GET")
        public String get() {
            return "ok";
        }
    }

    /** What the filters guard: "ok" on every path, as the resources answer. */
    public static final class Ok extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
            if (request.getDispatcherType() == DispatcherType.ERROR) {
                // The filters' side of APPLICATION_REJECT: the error page.
                response.setContentType(MediaType.APPLICATION_JSON);
                response.getWriter().write(applicationRefusal(response.getStatus(),
                        request.getAttribute(dev.sluice.web.RequestAttributes.POLICY)));
                return;
            }
            response.setContentType("text/plain");
            response.getWriter().write("ok");
        }
    }

    /** The servlet side: {@code RateLimitFilter}s by init-params in front of {@link Ok}. */
    static Side filters(List<App> apps) throws Exception {
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addFilter(ClientTenant.class, "/*", EnumSet.of(DispatcherType.REQUEST));
        ErrorPageErrorHandler errors = new ErrorPageErrorHandler();
        errors.addErrorPage(429, "/error-page");
        errors.addErrorPage(503, "/error-page");
        context.setErrorHandler(errors);
        for (App app : apps) {
            for (Route route : ROUTES) {
                int n = 0;
                for (Map<String, String> limit : route.limits()) {
                    Map<String, String> params = new LinkedHashMap<>(app.settings());
                    params.replace("reject", APPLICATION_REJECT, "send-error");
                    params.putAll(limit);
                    FilterHolder filter = new FilterHolder(dev.sluice.servlet.RateLimitFilter.class);
                    filter.setName(app.name() + "-" + route.name() + "-" + ++n);
                    filter.setAsyncSupported(true);
                    filter.setInitParameters(params);
                    context.addFilter(filter, "/" + app.name() + "/" + route.name(),
                            EnumSet.of(DispatcherType.REQUEST));
                }
            }
        }
        context.addServlet(new ServletHolder(new Ok()), "/*");
        return Side.start(context);
    }

    /** The JAX-RS side: one Jersey application per app, the feature configured by properties. */
    static Side jersey(List<App> apps) throws Exception {
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addFilter(ClientTenant.class, "/*", EnumSet.of(DispatcherType.REQUEST));
        for (App app : apps) {
            ResourceConfig config = new ResourceConfig(Basic.class, Cost.class, Repeated.class, Closed.class,
                    Open.class,
                    Composite.class, PostOnly.class, GetOnly.class, Attribute.class)
                    .register(RateLimitFeature.class);
            app.settings().forEach((name, value) -> config.property("sluice." + name,
                    name.equals("reject") && value.equals(APPLICATION_REJECT) ? "exception" : value));
            if (APPLICATION_REJECT.equals(app.settings().get("reject"))) {
                config.register(Refusals.class).register(Unavailable.class);
            }
            ServletHolder holder = new ServletHolder(app.name(), new ServletContainer(config));
            holder.setInitOrder(0); // a bad annotation or property fails the start
            holder.setAsyncSupported(true);
            context.addServlet(holder, "/" + app.name() + "/*");
        }
        return Side.start(context);
    }

    /** One started side; closing it stops its server. */
    static final class Side implements AutoCloseable {
        private final Server server;
        private final URI base;

        private Side(Server server, URI base) {
            this.server = server;
            this.base = base;
        }

        private static Side start(ServletContextHandler context) throws Exception {
            Server server = new Server();
            ServerConnector connector = new ServerConnector(server);
            connector.setHost("127.0.0.1");
            connector.setPort(0);
            server.addConnector(connector);
            server.setHandler(context);
            try {
                server.start();
            } catch (Exception | Error e) {
                server.stop();
                throw e;
            }
            if (!context.isAvailable()) {
                server.stop();
                throw new IllegalStateException("the context did not start: " + context.getState());
            }
            return new Side(server, URI.create("http://127.0.0.1:" + connector.getLocalPort()));
        }

        HttpResponse<String> get(App app, Route route, String client) {
            return HttpCalls.send("GET", base.resolve("/" + app.name() + "/" + route.name()), CLIENT, client);
        }

        @Override
        public void close() throws Exception {
            server.stop();
        }
    }
}
