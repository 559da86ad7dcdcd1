package dev.sluice.examples;

import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import jakarta.servlet.ServletRegistration;

/**
 * Chooses the one store of the application, for the servlet filters and the JAX-RS feature
 * alike, before either starts.
 *
 * <p>The store is, in order: the context-param {@code sluice.store} when the deployer sets one
 * (Tomcat's {@code <Parameter>} in {@code context.xml}, Jetty's
 * {@code WebAppContext.setInitParameter}); else the environment variable {@code SLUICE_STORE}
 * (e.g. {@code redis://127.0.0.1:6379}); else nothing, which leaves Sluice's default,
 * {@code memory}. A {@code web.xml} init-param cannot read the environment, hence this listener.
 *
 * <p>It gives the value to each {@code RateLimitFilter} declared without a {@code store}
 * init-param, and to each JAX-RS servlet (one with a {@code jakarta.ws.rs.Application}
 * init-param) without a {@code sluice.store} init-param: Jersey's servlet passes its init-params
 * to the application as properties. A filter or servlet that names its own store keeps it. Both
 * adapters then validate the value as usual: a bad one stops the deployment, naming it.
 *
 * <p>Must be declared in {@code web.xml}: only such listeners may change registrations, and
 * listeners run before filters and servlets are initialised.
 */
public class StoreSetting implements ServletContextListener {

    /** The context-param the deployer may set, and the JAX-RS property the servlet is given. */
    public static final String CONTEXT_PARAM = "sluice.store";
    /** The environment variable the demo reads. */
    public static final String ENVIRONMENT = "SLUICE_STORE";

    private static final String FILTER_CLASS = "dev.sluice.servlet.RateLimitFilter";
    /** The standard init-param of a servlet serving a JAX-RS application. */
    private static final String JAXRS_APPLICATION = "jakarta.ws.rs.Application";

    @Override
    public void contextInitialized(ServletContextEvent event) {
        ServletContext context = event.getServletContext();
        String store = blankToNull(context.getInitParameter(CONTEXT_PARAM));
        String source = "context-param " + CONTEXT_PARAM;
        if (store == null) {
            store = blankToNull(System.getenv(ENVIRONMENT));
            if (store == null) {
                return;
            }
            source = "environment variable " + ENVIRONMENT;
        }
        for (FilterRegistration filter : context.getFilterRegistrations().values()) {
            if (FILTER_CLASS.equals(filter.getClassName()) && filter.getInitParameter("store") == null) {
                filter.setInitParameter("store", store);
            }
        }
        for (ServletRegistration servlet : context.getServletRegistrations().values()) {
            if (servlet.getInitParameter(JAXRS_APPLICATION) != null && servlet.getInitParameter(CONTEXT_PARAM) == null) {
                servlet.setInitParameter(CONTEXT_PARAM, store);
            }
        }
        // The value is not logged: a Redis URL may carry a password. The adapters log their
        // store in their own start-up lines.
        context.log("Sluice store taken from the " + source);
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }
}
