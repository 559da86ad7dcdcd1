package dev.sluice.jaxrs;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;

/**
 * Resources whose {@link RateLimit} sits on an interface or a superclass, as in interface-first
 * APIs generated from OpenAPI. Callers are told apart by {@code X-Client}.
 */
final class Inherited {

    private Inherited() {
    }

    /** The interface carries the JAX-RS annotations and the limits; the class only implements it. */
    @Path("/api/widgets")
    @RateLimit(limit = "9/1m", key = "header:X-Client") // loses to the implementing class's own
    public interface WidgetsApi {
        @GET
        @RateLimit(limit = "2/1m", key = "header:X-Client")
        String list();

        @GET
        @Path("{id}")
        String get(@PathParam("id") String id);

        @GET
        @Path("special/{id}")
        @RateLimit(limit = "5/1m", key = "header:X-Client") // loses to the implementing method's own
        String special(@PathParam("id") String id);
    }

    @RateLimit(limit = "4/1m", key = "header:X-Client")
    public static class WidgetsImpl implements WidgetsApi {
        @Override
        public String list() {
            return "widgets";
        }

        @Override
        public String get(String id) {
            return "widget " + id;
        }

        @Override
        @RateLimit(limit = "1/1m", key = "header:X-Client")
        public String special(String id) {
            return "special " + id;
        }
    }

    /** A class-level limit on the interface applies to each method without one of its own. */
    @Path("/api/gadgets")
    @RateLimit(limit = "3/1m", key = "header:X-Client")
    public interface GadgetsApi {
        @GET
        String list();

        @GET
        @Path("hot")
        @RateLimit(limit = "1/1m", key = "header:X-Client")
        String hot();
    }

    public static class GadgetsImpl implements GadgetsApi {
        @Override
        public String list() {
            return "gadgets";
        }

        @Override
        public String hot() {
            return "hot";
        }
    }

    /**
     * {@code @RateLimit} on the interface method only, while the implementing method carries JAX-RS
     * annotations of its own: by Jakarta REST's annotation inheritance (section 3.6) the interface
     * method's annotations are then all ignored, this one too.
     */
    public interface QuotasApi {
        @RateLimit(limit = "2/1m", key = "header:X-Client")
        String list();
    }

    @Path("/quotas")
    public static class QuotasImpl implements QuotasApi {
        @Override
        @GET
        public String list() {
            return "quotas";
        }
    }

    /** The superclass's annotations take precedence over the interface's. */
    public interface PricedApi {
        @GET
        @RateLimit(limit = "5/1m", key = "header:X-Client")
        String price();
    }

    public abstract static class PricedBase {
        @GET
        @RateLimit(limit = "3/1m", key = "header:X-Client")
        public abstract String price();
    }

    @Path("/priced")
    public static class PricedImpl extends PricedBase implements PricedApi {
        @Override
        public String price() {
            return "priced";
        }
    }
}
