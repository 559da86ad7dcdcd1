package dev.sluice.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;

import java.net.URI;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A web application as {@code web.xml} would declare it: filters with init-params and mappings,
 * in order, in front of {@link TestServlet} on {@code /*}; error 500 shows {@code /target}.
 * {@link Container} runs it in a real Jetty.
 */
final class TestApp {

    /** One {@code <filter>} and its {@code <filter-mapping>}s. */
    record FilterDecl(String name, Map<String, String> params, Filter instance, boolean viaListener,
            List<String> patterns, EnumSet<DispatcherType> dispatches) {
    }

    final List<FilterDecl> filters = new ArrayList<>();
    /** More {@code <servlet>}s, each on its own pattern. */
    final List<ServletDecl> servlets = new ArrayList<>();

    /** One more {@code <servlet>} and its mapping. */
    record ServletDecl(String pattern, jakarta.servlet.http.HttpServlet instance, Map<String, String> params) {
    }

    /** Another servlet on {@code pattern}, with init-params {@code k, v, k, v...}. */
    TestApp servlet(String pattern, jakarta.servlet.http.HttpServlet instance, String... params) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < params.length; i += 2) {
            map.put(params[i], params[i + 1]);
        }
        servlets.add(new ServletDecl(pattern, instance, map));
        return this;
    }
    /** The {@code <context-param>}s. */
    final Map<String, String> contextParams = new LinkedHashMap<>();
    /** {@code <error-page>}s by status, beside 500's {@code /target}. */
    final Map<Integer, String> errorPages = new LinkedHashMap<>();
    /**
     * The server's access log: Jetty's {@code CustomRequestLog} format, and where its lines go; none when {@code null}.
     */
    String accessLogFormat;
    java.util.function.Consumer<String> accessLog;
    /** The application behind the filters on {@code /*}; {@link TestServlet} unless {@link #servlet} says otherwise. */
    jakarta.servlet.http.HttpServlet servlet = new TestServlet();

    /** A {@code <context-param>}. */
    TestApp contextParam(String name, String value) {
        contextParams.put(name, value);
        return this;
    }

    /** An {@code <error-page>} for {@code status} at {@code location}. */
    TestApp errorPage(int status, String location) {
        errorPages.put(status, location);
        return this;
    }

    /** An access log of {@code format} (Jetty's {@code CustomRequestLog} syntax) whose lines go to {@code lines}. */
    TestApp accessLog(String format, java.util.function.Consumer<String> lines) {
        this.accessLogFormat = format;
        this.accessLog = lines;
        return this;
    }

    /** Another application behind the filters. */
    TestApp servlet(jakarta.servlet.http.HttpServlet application) {
        this.servlet = application;
        return this;
    }

    /**
     * A {@code <filter-class>dev.sluice.servlet.RateLimitFilter</filter-class>} with init-params {@code k, v, k, v...}.
     */
    TestApp filter(String name, String pattern, String... params) {
        return filter(name, List.of(pattern), EnumSet.of(DispatcherType.REQUEST), params);
    }

    TestApp filter(String name, List<String> patterns, EnumSet<DispatcherType> dispatches, String... params) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < params.length; i += 2) {
            map.put(params[i], params[i + 1]);
        }
        filters.add(new FilterDecl(name, map, null, false, patterns, dispatches));
        return this;
    }

    /** A filter instance added by a listener through {@code ServletContext.addFilter}, as applications do. */
    TestApp programmatic(String name, Filter instance, String pattern) {
        filters.add(new FilterDecl(name, Map.of(), instance, true, List.of(pattern),
                EnumSet.of(DispatcherType.REQUEST)));
        return this;
    }

    /** A filter instance with init-params, through the container's own API. */
    TestApp instance(String name, Filter instance, String pattern, String... params) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < params.length; i += 2) {
            map.put(params[i], params[i + 1]);
        }
        filters.add(new FilterDecl(name, map, instance, false, List.of(pattern), EnumSet.of(DispatcherType.REQUEST)));
        return this;
    }

    /** The container refused to start the application; records the context's state at that moment. */
    static final class DeploymentFailed extends Exception {
        private static final long serialVersionUID = 1L;
        final boolean contextFailed;
        final boolean contextAvailable;

        DeploymentFailed(Exception cause, boolean contextFailed, boolean contextAvailable) {
            super("deployment failed (context failed: " + contextFailed + ", available: " + contextAvailable + ")",
                    cause);
            this.contextFailed = contextFailed;
            this.contextAvailable = contextAvailable;
        }
    }

    /** A started application; closing it stops the server (and destroys the filters). */
    interface Running extends AutoCloseable {
        URI uri(String path);

        @Override
        void close();
    }
}
