package dev.sluice.examples;

import java.nio.file.Path;
import java.util.Map;

/**
 * The demo: deploys the examples WAR file in embedded Jetty 12 EE11 on {@code localhost} and
 * waits until Ctrl-C. Started by {@code ./mvnw -B -q -Pdemo -DskipTests verify} from the
 * repository root; {@code SLUICE_STORE=redis://127.0.0.1:6379} in the environment switches the
 * store to Redis (given to the WAR as the context-param {@code sluice.store}, as a deployer would).
 *
 * <p>It lives with the tests because it deploys the WAR exactly as they do, through
 * {@link JettyWar}, and because Jetty must not end up inside the WAR.
 */
public final class DemoServer {

    private DemoServer() {
    }

    /**
     * Runs the demo.
     *
     * @param args the WAR file, and optionally the port (default 8080)
     */
    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: DemoServer <war-file> [port]");
            System.exit(2);
        }
        int port = args.length == 2 ? Integer.parseInt(args[1]) : 8080;
        String store = System.getenv("SLUICE_STORE");
        JettyWar jetty;
        try {
            // Loopback only, never a public interface: this is a demo.
            jetty = JettyWar.deploy(Path.of(args[0]), "127.0.0.1", port,
                    store == null || store.isBlank() ? Map.of() : Map.of("sluice.store", store.trim()));
        } catch (Exception e) {
            System.err.println("The demo did not start: " + e);
            System.exit(1);
            return;
        }
        System.out.printf("%nSluice demo on http://localhost:%d/ (%s, store: %s). Ctrl-C stops it.%n"
                        + "  curl -i -H 'X-API-Key: demo' http://localhost:%d/hello%n"
                        + "  curl -i -H 'X-API-Key: demo' http://localhost:%d/api/bucket%n"
                        + "  console: http://localhost:%d/sluice/ (user %s, password %s)%n%n",
                port, jetty, store == null || store.isBlank() ? "memory"
                        // Never print a password from redis://user:password@host
                        : store.trim().replaceFirst("//[^/@]*@", "//***@") + " from SLUICE_STORE", port, port, port,
                DemoRealm.USER, DemoRealm.PASSWORD);
        jetty.join(); // Jetty's shutdown hook stops it on Ctrl-C
    }
}
