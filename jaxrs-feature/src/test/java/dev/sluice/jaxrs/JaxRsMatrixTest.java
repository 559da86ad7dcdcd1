package dev.sluice.jaxrs;

import dev.sluice.web.matrix.Adapter;
import dev.sluice.web.matrix.AdapterMatrix;
import dev.sluice.web.matrix.Routes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;

import java.net.URI;
import java.util.List;

/**
 * The adapter matrix on {@code RateLimitFeature}: one Jersey application per app, configured by
 * {@code sluice.*} properties, whose {@code @RateLimit} resources below say what {@link Routes#ALL}
 * says (keep them in step), in Jetty 12 EE11.
 */
class JaxRsMatrixTest extends AdapterMatrix {

    @Override
    protected List<Adapter> adapters() {
        return List.of(new Adapter() {
            @Override
            public String name() {
                return "jax-rs-jersey";
            }

            @Override
            public Running start(List<Routes.App> apps) throws Exception {
                return JaxRsMatrixTest.start(apps);
            }
        });
    }

    private static Adapter.Running start(List<Routes.App> apps) throws Exception {
        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        for (Routes.App app : apps) {
            ResourceConfig config = new ResourceConfig(One.class, Costly.class, Five.class, Three.class)
                    .register(RateLimitFeature.class);
            app.settings().forEach((name, value) -> config.property("sluice." + name, value));
            ServletHolder holder = new ServletHolder(app.name(), new ServletContainer(config));
            holder.setInitOrder(0); // a bad annotation or property fails the start
            context.addServlet(holder, "/" + app.name() + "/*");
        }
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception | Error e) {
            server.stop();
            throw e;
        }
        if (!context.isAvailable()) {
            server.stop();
            throw new IllegalStateException("the context did not start: " + context.getState());
        }
        URI base = URI.create("http://127.0.0.1:" + connector.getLocalPort());
        return new Adapter.Running() {
            @Override
            public URI uri(String path) {
                return base.resolve(path);
            }

            @Override
            public void close() throws Exception {
                server.stop();
            }
        };
    }

    /** {@link Routes#ONE}. */
    @Path("one")
    public static class One {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "one", limit = "1/1m", key = Routes.KEY)
        public String get() {
            return "ok";
        }
    }

    /** {@link Routes#COSTLY}. */
    @Path("costly")
    public static class Costly {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "costly", limit = "3/1m", cost = 2, key = Routes.KEY)
        public String get() {
            return "ok";
        }
    }

    /** {@link Routes#FIVE}. */
    @Path("five")
    public static class Five {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "api.v2", limit = "5/1m", key = Routes.KEY)
        public String get() {
            return "ok";
        }
    }

    /** {@link Routes#THREE}. */
    @Path("three")
    public static class Three {
        @GET
        @Produces(MediaType.TEXT_PLAIN)
        @RateLimit(policy = "three", limit = "3/1m", key = Routes.KEY)
        public String get() {
            return "ok";
        }
    }
}
