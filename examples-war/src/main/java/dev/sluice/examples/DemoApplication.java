package dev.sluice.examples;

import org.glassfish.jersey.server.ResourceConfig;

/**
 * The JAX-RS application, served by Jersey's servlet under {@code /api} (see {@code web.xml}).
 * It registers nothing by hand: Jersey scans this package for resources and {@code dev.sluice.jaxrs}
 * for providers, and finds {@link dev.sluice.jaxrs.RateLimitFeature} by its {@code @Provider}
 * annotation, as a class, so that Jersey manages it and closes its store when the application
 * stops. The {@code sluice.*} properties come from the servlet's init-params: {@code sluice.store},
 * set by {@link StoreSetting}).
 */
public class DemoApplication extends ResourceConfig {

    public DemoApplication() {
        packages("dev.sluice.examples", "dev.sluice.jaxrs");
    }
}
