package dev.sluice.examples;

import org.eclipse.jetty.ee11.webapp.WebAppContext;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

import java.io.IOException;

/**
 * The container of {@link MemoryOnlyIT}, run in a JVM of its own whose class path holds Jetty,
 * the Servlet API, SLF4J and this class only: deploys an exploded web application at {@code /}
 * on 127.0.0.1 and a free port, with the context-param {@code sluice.store}, and the probe servlet
 * at {@value #PROBE}. Reports on standard output {@code MEMORY-ONLY STARTED <port>}, or
 * {@code MEMORY-ONLY FAILED <causes>} and exits with 1. Exits when its standard input ends: the
 * test holds it open, so the JVM ends with the test's, whatever happens to the test.
 */
public final class MemoryOnlyServer {

    /** Where the probe servlet answers. */
    static final String PROBE = "/memory-only-probe";
    static final String STARTED = "MEMORY-ONLY STARTED ";
    static final String FAILED = "MEMORY-ONLY FAILED ";

    private MemoryOnlyServer() {
    }

    /** @param args the exploded web application, and the store */
    public static void main(String[] args) throws Exception {
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        WebAppContext webapp = new WebAppContext();
        webapp.setContextPath("/");
        webapp.setWar(args[0]);
        webapp.setInitParameter("sluice.store", args[1]);
        webapp.getSecurityHandler().setLoginService(DemoRealm.create());
        webapp.setThrowUnavailableOnStartupException(true);
        // By name: the probe is in the application's WEB-INF/classes, not on this class path.
        // (web.xml is metadata-complete, so it is added here rather than found by annotation.)
        webapp.addServlet("dev.sluice.examples.MemoryOnlyProbe", PROBE);
        server.setHandler(webapp);
        server.setStopAtShutdown(true);
        Thread watch = new Thread(MemoryOnlyServer::exitWhenInputEnds, "memory-only-watch");
        watch.setDaemon(true);
        watch.start();
        try {
            server.start();
            if (!webapp.isAvailable()) {
                throw new IllegalStateException("the web application did not become available");
            }
        } catch (Exception | Error e) {
            System.out.println(FAILED + causes(e));
            System.out.flush();
            server.stop();
            System.exit(1);
        }
        System.out.println(STARTED + connector.getLocalPort());
        System.out.flush();
        server.join();
    }

    private static String causes(Throwable e) {
        StringBuilder all = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            all.append(all.length() == 0 ? "" : " <- ").append(t);
        }
        return all.toString().replace('\n', ' ');
    }

    private static void exitWhenInputEnds() {
        try {
            while (System.in.read() >= 0) {
                // nothing is sent; only the end matters
            }
        } catch (IOException e) {
            // the same: the test is gone
        }
        System.exit(0);
    }
}
