package dev.sluice.examples;

import dev.sluice.jaxrs.RateLimitFeature;
import jakarta.servlet.ServletContext;
import jakarta.ws.rs.core.Context;
import org.glassfish.jersey.server.ResourceConfig;

import java.util.Collections;

/**
 * The JAX-RS application, served by Jersey's servlet under {@code /api} (see {@code web.xml}).
 * It registers nothing by hand: Jersey scans this package for resources and {@code dev.sluice.jaxrs}
 * for providers, and finds {@link dev.sluice.jaxrs.RateLimitFeature} by its {@code @Provider}
 * annotation, as a class, so that Jersey manages it and closes its store when the application
 * stops.
 *
 * <p>The feature reads {@code sluice.*} application properties. A JAX-RS runtime does not make
 * the web application's context-params properties, so this application takes its Sluice defaults
 * from them: those of {@code web.xml} ({@code sluice.headers}, {@code sluice.timeout}) and
 * {@code sluice.store}, which the deployer sets; the same values the servlet filters read.
 */
public class DemoApplication extends ResourceConfig {

    /** The application, with the {@code sluice.*} context-params of {@code context} as properties. */
    public DemoApplication(@Context ServletContext context) {
        packages("dev.sluice.examples", "dev.sluice.jaxrs");
        for (String name : Collections.list(context.getInitParameterNames())) {
            if (name.startsWith("sluice.")) {
                property(name, context.getInitParameter(name));
            }
        }
        // The registry MetricsServlet.Registry gives the filters, for the resources' meters too.
        Object registry = context.getAttribute(RateLimitFeature.METER_REGISTRY);
        if (registry != null) {
            property(RateLimitFeature.METER_REGISTRY, registry);
        }
    }
}
