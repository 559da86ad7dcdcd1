package dev.sluice.javax;

import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.LifecycleState;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.core.StandardContext;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.scan.StandardJarScanner;

import javax.servlet.ServletContainerInitializer;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Deploys a {@link WebApp} directory, {@code WEB-INF/web.xml} and all, in an embedded Tomcat 9
 * (Servlet 4.0, javax.servlet) on 127.0.0.1, port 0. The filter class named in the web.xml is
 * the transformed one in this module's {@code target/classes}.
 */
final class Tomcat9 {

    /** Tomcat logs a filter's failed {@code init} (and marks the context FAILED) rather than throwing it. */
    private static final Logger CATALINA = Logger.getLogger("org.apache.catalina.core");

    private Tomcat9() {
    }

    static Running deploy(WebApp app, Path baseDir) throws Exception {
        return deploy(app, baseDir, null);
    }

    /** As {@link #deploy(WebApp, Path)}, with a {@code ServletContainerInitializer} run before the filters start. */
    static Running deploy(WebApp app, Path baseDir, ServletContainerInitializer initializer) throws Exception {
        return deploy(app, baseDir, initializer, context -> { });
    }

    /**
     * As {@link #deploy(WebApp, Path, ServletContainerInitializer)}, with {@code customiser} given the context first (a
     * valve, say).
     */
    static Running deploy(WebApp app, Path baseDir, ServletContainerInitializer initializer,
                          java.util.function.Consumer<Context> customiser) throws Exception {
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(baseDir.toString());
        Connector connector = new Connector();
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        // A processor per connection, never reused: an application thread still writing to a connection
        // the client reset can reach Tomcat 9's processor after it was recycled (a NullPointerException
        // in its error handling, then a 500 set on whatever request the processor serves next).
        connector.setProperty("processorCache", "0");
        tomcat.setConnector(connector);
        // Only the application's own web.xml: no default servlet or JSP servlet.
        tomcat.setAddDefaultWebXmlToWebapp(false);
        Context context = tomcat.addWebapp("", app.docBase().toString());
        ((StandardJarScanner) context.getJarScanner()).setScanClassPath(false);
        if (initializer != null) {
            context.addServletContainerInitializer(initializer, null);
        }
        customiser.accept(context);
        // The test JVM runs without the --add-opens these leak checks want; they only log warnings.
        StandardContext standard = (StandardContext) context;
        standard.setClearReferencesObjectStreamClassCaches(false);
        standard.setClearReferencesThreadLocals(false);
        standard.setClearReferencesRmiTargets(false);

        List<Throwable> logged = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getThrown() != null) {
                    logged.add(record.getThrown());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        CATALINA.addHandler(capture);
        try {
            tomcat.start();
        } catch (LifecycleException e) {
            logged.add(e);
        } finally {
            CATALINA.removeHandler(capture);
        }
        if (context.getState() != LifecycleState.STARTED) {
            LifecycleState state = context.getState();
            stop(tomcat);
            DeploymentFailed failed = new DeploymentFailed("Tomcat 9 did not start the application (context "
                    + state + ")", logged.isEmpty() ? null : logged.get(0));
            logged.stream().skip(1).forEach(failed::addSuppressed);
            throw failed;
        }
        int port = connector.getLocalPort();
        return new Running() {
            @Override
            public URI uri(String path) {
                return URI.create("http://127.0.0.1:" + port + path);
            }

            @Override
            public void close() {
                stop(tomcat);
            }
        };
    }

    private static void stop(Tomcat tomcat) {
        try {
            tomcat.stop();
            tomcat.destroy();
        } catch (LifecycleException e) {
            throw new IllegalStateException(e);
        }
    }
}
