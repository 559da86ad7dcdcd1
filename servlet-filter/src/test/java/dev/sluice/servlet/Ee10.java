package dev.sluice.servlet;

import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import org.eclipse.jetty.ee10.servlet.ErrorPageErrorHandler;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.CustomRequestLog;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.net.URI;

/** Runs a {@link TestApp} in a Jetty 12 EE10 {@code ServletContextHandler} on 127.0.0.1, port 0. */
final class Ee10 {

    private Ee10() {
    }

    static TestApp.Running start(TestApp app) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        app.contextParams.forEach(context::setInitParameter);
        if (app.accessLog != null) {
            server.setRequestLog(new CustomRequestLog(app.accessLog::accept, app.accessLogFormat));
        }
        for (TestApp.FilterDecl filter : app.filters) {
            if (filter.viaListener()) {
                context.addEventListener(new ServletContextListener() {
                    @Override
                    public void contextInitialized(ServletContextEvent event) {
                        var registration = event.getServletContext().addFilter(filter.name(), filter.instance());
                        registration.setAsyncSupported(true);
                        registration.addMappingForUrlPatterns(filter.dispatches(), true,
                                filter.patterns().toArray(String[]::new));
                    }
                });
                continue;
            }
            FilterHolder holder = filter.instance() != null ? new FilterHolder(filter.instance())
                    : new FilterHolder(RateLimitFilter.class);
            holder.setName(filter.name());
            holder.setAsyncSupported(true);
            filter.params().forEach(holder::setInitParameter);
            for (String pattern : filter.patterns()) {
                context.addFilter(holder, pattern, filter.dispatches());
            }
        }
        ServletHolder servlet = new ServletHolder(app.servlet);
        servlet.setAsyncSupported(true);
        context.addServlet(servlet, "/*");
        for (TestApp.ServletDecl more : app.servlets) {
            ServletHolder holder = new ServletHolder(more.instance());
            more.params().forEach(holder::setInitParameter);
            holder.setInitOrder(1); // as <load-on-startup>: a bad init-param fails the start-up
            context.addServlet(holder, more.pattern());
        }
        ErrorPageErrorHandler errors = new ErrorPageErrorHandler();
        errors.addErrorPage(500, "/target");
        app.errorPages.forEach(errors::addErrorPage);
        context.setErrorHandler(errors);
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception e) {
            TestApp.DeploymentFailed failed = new TestApp.DeploymentFailed(e, context.isFailed(),
                    context.isAvailable());
            server.stop();
            throw failed;
        }
        if (!context.isAvailable() || context.isFailed()) {
            server.stop();
            throw new IllegalStateException("the context did not start: " + context.getState());
        }
        int port = connector.getLocalPort();
        return new TestApp.Running() {
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
