package dev.sluice.jaxrs;

import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * One JAX-RS application: Jersey's servlet container in a Jetty 12 EE11 context, on 127.0.0.1 and
 * a free port, called over real HTTP. The servlet is initialised at start, so a configuration
 * error fails {@link #start}, as it fails a deployment.
 */
final class JerseyApp implements AutoCloseable {

    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private final Server server;
    private final URI base;

    private JerseyApp(Server server, URI base) {
        this.server = server;
        this.base = base;
    }

    /** Starts {@code config}; throws whatever start-up threw, after stopping the server. */
    static JerseyApp start(ResourceConfig config) throws Exception {
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

    HttpResponse<String> get(String path, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10)).GET();
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        try {
            return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
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
