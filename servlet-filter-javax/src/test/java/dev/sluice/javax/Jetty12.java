package dev.sluice.javax;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.net.URI;
import java.util.EnumSet;

/**
 * Runs the filters of a {@link WebApp}'s web.xml with the jakarta filter jar in a Jetty 12 EE10
 * {@code ServletContextHandler} on 127.0.0.1, port 0, in front of {@link JakartaOkServlet}: the
 * reference the javax artifact is compared with.
 */
final class Jetty12 {

    private Jetty12() {
    }

    static Running deploy(WebApp app, ClassLoader jakartaFilters) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        for (WebApp.FilterDecl filter : app.filters()) {
            Class<? extends Filter> type = jakartaFilters.loadClass(filter.className()).asSubclass(Filter.class);
            FilterHolder holder = new FilterHolder(type);
            holder.setName(filter.name());
            holder.setAsyncSupported(filter.asyncSupported());
            filter.params().forEach(holder::setInitParameter);
            for (String pattern : filter.patterns()) {
                context.addFilter(holder, pattern, EnumSet.of(DispatcherType.REQUEST));
            }
        }
        ServletHolder servlet = new ServletHolder(new JakartaOkServlet());
        servlet.setAsyncSupported(true);
        context.addServlet(servlet, "/*");
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception e) {
            server.stop();
            throw new DeploymentFailed("Jetty 12 did not start the application", e);
        }
        if (!context.isAvailable() || context.isFailed()) {
            server.stop();
            throw new DeploymentFailed("Jetty 12 did not start the application (" + context.getState() + ")", null);
        }
        int port = connector.getLocalPort();
        return new Running() {
            @Override
            public URI uri(String path) {
                return URI.create("http://127.0.0.1:" + port + path);
            }

            @Override
            public void close() {
                try {
                    server.stop();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        };
    }
}
