package dev.sluice.examples;

import dev.sluice.jaxrs.RateLimitFeature;
import jakarta.ws.rs.core.Application;

import java.util.Set;

/**
 * The JAX-RS application, served by Jersey's servlet under {@code /api} (see {@code web.xml}).
 * It registers the feature <em>class</em>, so that Jersey manages it and closes its store when
 * the application stops. The {@code sluice.*} properties come from the servlet's init-params:
 * {@code sluice.store}, set by {@link StoreSetting}).
 */
public class DemoApplication extends Application {

    @Override
    public Set<Class<?>> getClasses() {
        return Set.of(Examples.class, RateLimitFeature.class);
    }
}
