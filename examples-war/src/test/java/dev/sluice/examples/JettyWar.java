package dev.sluice.examples;

import org.eclipse.jetty.ee11.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Deploys a WAR file in embedded Jetty 12 EE11, as the demo and the tests do: a
 * {@link WebAppContext} given the file, at the root context. Jetty unpacks it into a temporary
 * directory and loads it through its own web-application class loader, as in a standalone Jetty.
 */
final class JettyWar implements Deployed {

    private final Server server;
    private final URI base;

    private JettyWar(Server server, URI base) {
        this.server = server;
        this.base = base;
    }

    /**
     * Starts Jetty on {@code host:port} (port 0 picks a free one) with the WAR at {@code /}.
     *
     * @param contextParams context init-params, as a deployer would set them (e.g. {@code sluice.store})
     * @throws IllegalStateException if the application did not start; Jetty is stopped then
     */
    static JettyWar deploy(Path war, String host, int port, Map<String, String> contextParams) throws Exception {
        if (!Files.isRegularFile(war)) {
            throw new IllegalArgumentException("no WAR file at " + war + " (run `package` first)");
        }
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost(host);
        connector.setPort(port);
        server.addConnector(connector);

        WebAppContext webapp = new WebAppContext();
        webapp.setContextPath("/");
        webapp.setWar(war.toAbsolutePath().toString());
        contextParams.forEach(webapp::setInitParameter);
        webapp.getSecurityHandler().setLoginService(DemoRealm.create());
        // A failed filter or servlet must fail the start, not leave a half-working application.
        webapp.setThrowUnavailableOnStartupException(true);
        server.setHandler(webapp);
        server.setStopAtShutdown(true); // Ctrl-C in the demo undeploys cleanly (stores closed)
        try {
            server.start();
        } catch (Exception | Error e) {
            server.stop();
            throw e;
        }
        if (!webapp.isAvailable()) {
            server.stop();
            throw new IllegalStateException("the web application did not start; see the log above");
        }
        return new JettyWar(server, URI.create("http://" + host + ":" + connector.getLocalPort() + "/"));
    }

    @Override
    public URI base() {
        return base;
    }

    /** Blocks until the server stops (in the demo: Ctrl-C). */
    void join() throws InterruptedException {
        server.join();
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("could not stop Jetty", e);
        }
    }

    @Override
    public String toString() {
        return "Jetty " + Server.getVersion() + " EE11";
    }
}
