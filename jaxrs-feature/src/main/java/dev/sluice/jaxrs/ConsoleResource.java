package dev.sluice.jaxrs;

import dev.sluice.web.internal.Console;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;

/**
 * The operator's console for JAX-RS applications, the twin of {@code dev.sluice.servlet.ConsoleServlet}:
 * the same page and JSON API on the {@link dev.sluice.web.PolicyRegistry} of the application's
 * {@link RateLimitFeature} ({@link RateLimitFeature#policies()}). Off unless the application maps it
 * deliberately, by a subclass carrying the path (this class has none, so that provider scanning of
 * {@code dev.sluice.jaxrs} never maps it), registered next to the feature:
 *
 * <pre>{@code
 * @Path("sluice")
 * public class OpsConsole extends ConsoleResource {
 * }
 * // in the Application: getClasses() returns RateLimitFeature.class and OpsConsole.class
 * }</pre>
 *
 * <p>The feature serves it, in a request filter bound to its methods at priority
 * {@link jakarta.ws.rs.Priorities#AUTHORIZATION} (after the application's authentication):
 * every request needs a {@code SecurityContext} user in the role of application property
 * {@value #ROLE} (default {@value #DEFAULT_ROLE}), else {@code 401} (no user) or {@code 403};
 * only {@value #AUTHENTICATION}{@code =none} lifts this, for a console protected otherwise
 * (logged as a warning at start-up); then only a {@code Host} that is a loopback name or address,
 * or one of {@value #ALLOWED_HOSTS}, is served ({@code 403} otherwise: no page on the internal
 * network may reach it under a name rebound to its address). A request that changes something
 * ({@code POST}, {@code PUT}, {@code DELETE}) from another site ({@code Sec-Fetch-Site}, or an
 * {@code Origin} that is not the console's) is refused {@code 403}; behind a proxy, the console's
 * origin and {@code Host} are what a peer in {@code sluice.trusted-proxies} says in its
 * {@code sluice.forwarded-header} (on a servlet container, where the peer is known). A request a
 * Sluice rate limit decided is refused {@code 500}: the console must stay
 * reachable during the flood it helps to stop. Without the feature in the application, every
 * request is answered {@code 500}.
 */
public class ConsoleResource {

    /** The application property naming the role every console request's user must have, {@value}. */
    public static final String ROLE = "sluice.console.role";
    /** The application property {@value}: {@code required} (the default) or {@code none}. */
    public static final String AUTHENTICATION = "sluice.console.authentication";
    /**
     * The application property {@value}: with {@link #AUTHENTICATION}{@code =none}, the hosts
     * (comma-separated names or addresses, no port) whose {@code Host} the console answers besides
     * the loopback ones; with authentication, checked only when given.
     */
    public static final String ALLOWED_HOSTS = "sluice.console.allowed-hosts";
    /** The role required by default. */
    public static final String DEFAULT_ROLE = "sluice-admin";

    /** The constructor the runtime calls. */
    public ConsoleResource() {
    }

    /** The page, at the mapped path itself (redirected to it with a trailing slash). */
    @GET
    public Response page() {
        return unserved();
    }

    /** The page's assets and the policies as JSON. */
    @GET
    @Path("{path: .*}")
    public Response get() {
        return unserved();
    }

    /** Resets a caller. */
    @POST
    @Path("{path: .*}")
    public Response post() {
        return unserved();
    }

    /** Sets an override. */
    @PUT
    @Path("{path: .*}")
    public Response put() {
        return unserved();
    }

    /** Clears an override. */
    @DELETE
    @Path("{path: .*}")
    public Response delete() {
        return unserved();
    }

    /** Reached only when no {@link RateLimitFeature} serves the console. */
    private static Response unserved() {
        return ConsoleFilter.response(Console.error(500, "no RateLimitFeature in this application serves the console; "
                + "register it next to the console"));
    }
}
