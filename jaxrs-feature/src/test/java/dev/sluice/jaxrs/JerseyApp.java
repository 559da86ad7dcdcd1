package dev.sluice.jaxrs;

import dev.sluice.testing.HttpCalls;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.EnumSet;
import java.util.Map;

/**
 * One JAX-RS application: Jersey's servlet container in a Jetty 12 EE11 context, on 127.0.0.1 and
 * a free port, called over real HTTP. The servlet is initialised at start, so a configuration
 * error fails {@link #start}, as it fails a deployment.
 */
final class JerseyApp implements AutoCloseable {

    private final Server server;
    private final URI base;

    private JerseyApp(Server server, URI base) {
        this.server = server;
        this.base = base;
    }

    /** Starts {@code config}; throws whatever start-up threw, after stopping the server. */
    static JerseyApp start(ResourceConfig config) throws Exception {
        return start(config, Map.of());
    }

    /**
     * Starts {@code config} behind one {@code dev.sluice.servlet.RateLimitFilter} on {@code /*}
     * configured by {@code filterParams} (none when empty).
     */
    static JerseyApp start(ResourceConfig config, Map<String, String> filterParams) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        ServletHolder holder = new ServletHolder(new ServletContainer(config));
        holder.setInitOrder(0);
        context.addServlet(holder, "/*");
        if (!filterParams.isEmpty()) {
            FilterHolder filter = new FilterHolder(dev.sluice.servlet.RateLimitFilter.class);
            filter.setName("front");
            filter.setInitParameters(filterParams);
            context.addFilter(filter, "/*", EnumSet.of(DispatcherType.REQUEST));
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
        return new JerseyApp(server, URI.create("http://127.0.0.1:" + connector.getLocalPort()));
    }

    /** The address of {@code path} on this application. */
    URI uri(String path) {
        return base.resolve(path);
    }

    HttpResponse<String> get(String path, String... headers) {
        return HttpCalls.send("GET", base.resolve(path), headers);
    }

    HttpResponse<String> post(String path, String... headers) {
        return HttpCalls.send("POST", base.resolve(path), headers);
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("could not stop Jetty", e);
        }
    }
}
