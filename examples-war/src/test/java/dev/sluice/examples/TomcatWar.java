package dev.sluice.examples;

import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.catalina.util.ServerInfo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Deploys a WAR file in embedded Tomcat 11 (Servlet 6.1): {@link Tomcat#addWebapp} given the
 * file, at the root context, with Tomcat's defaults (default servlet, welcome files, MIME types),
 * in a fresh base directory deleted on close.
 */
final class TomcatWar implements Deployed {

    private final Tomcat tomcat;
    private final Path baseDir;
    private final URI base;

    private TomcatWar(Tomcat tomcat, Path baseDir, URI base) {
        this.tomcat = tomcat;
        this.baseDir = baseDir;
        this.base = base;
    }

    /**
     * Starts Tomcat on 127.0.0.1 and a free port with the WAR at {@code /}.
     *
     * @param contextParams context init-params, as a {@code <Parameter>} in {@code context.xml} would set them
     * @throws IllegalStateException if the application did not start; Tomcat is stopped then
     */
    static TomcatWar deploy(Path war, Map<String, String> contextParams) throws Exception {
        if (!Files.isRegularFile(war)) {
            throw new IllegalArgumentException("no WAR file at " + war + " (run `package` first)");
        }
        Path baseDir = Files.createTempDirectory("sluice-tomcat");
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(baseDir.toString());
        Files.createDirectories(baseDir.resolve("webapps")); // where Tomcat unpacks the WAR

        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        tomcat.getService().addConnector(connector);
        tomcat.setConnector(connector);
        tomcat.getHost().setAutoDeploy(false);

        Context context = tomcat.addWebapp("", war.toAbsolutePath().toString());
        contextParams.forEach(context::addParameter);
        try {
            tomcat.start();
        } catch (LifecycleException | RuntimeException e) {
            stop(tomcat, baseDir);
            throw e;
        }
        if (context.getState() != LifecycleState.STARTED) {
            stop(tomcat, baseDir);
            throw new IllegalStateException("the web application did not start: " + context.getState());
        }
        return new TomcatWar(tomcat, baseDir, URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/"));
    }

    @Override
    public URI base() {
        return base;
    }

    @Override
    public void close() {
        stop(tomcat, baseDir);
    }

    private static void stop(Tomcat tomcat, Path baseDir) {
        try {
            tomcat.stop();
            tomcat.destroy();
        } catch (LifecycleException e) {
            throw new IllegalStateException("could not stop Tomcat", e);
        } finally {
            delete(baseDir);
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return ServerInfo.getServerInfo();
    }
}
