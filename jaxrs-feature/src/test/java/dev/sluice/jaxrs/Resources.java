package dev.sluice.jaxrs;

import dev.sluice.Algorithm;

import dev.sluice.FailureMode;
import jakarta.annotation.Priority;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.Suspended;
import jakarta.ws.rs.core.SecurityContext;

import java.security.Principal;

/**
 * The resources the tests deploy. Callers are told apart by {@code X-Client} so that tests sharing one Redis never
 * meet.
 */
final class Resources {

    private Resources() {
    }

    @Path("/m")
    public static class MethodLimited {
        @GET
        @Path("three")
        @RateLimit(limit = "3/1m", key = "header:X-Client")
        public String three() {
            return "three";
        }

        @GET
        @Path("free")
        public String free() {
            return "free";
        }

        /** Two limits decided together; the hourly one is shared, by policy name, with {@link #hourly()}. */
        @GET
        @Path("two")
        @RateLimit(limit = "2/1m", policy = "two-minute", key = "header:X-Client")
        @RateLimit(limit = "5/1h", policy = "two-hourly", key = "header:X-Client")
        public String two() {
            return "two";
        }

        @GET
        @Path("hourly")
        @RateLimit(limit = "5/1h", policy = "two-hourly", key = "header:X-Client")
        public String hourly() {
            return "hourly";
        }

        /** Limits GET only; every runtime answers HEAD with this method too. */
        @GET
        @Path("reads")
        @RateLimit(limit = "2/1m", key = "header:X-Client", methods = "GET")
        public String reads() {
            return "reads";
        }

        @GET
        @Path("user")
        @RateLimit(limit = "2/1m", key = "principal")
        public String user(@jakarta.ws.rs.core.Context SecurityContext security) {
            return security.getUserPrincipal().getName();
        }

        @GET
        @Path("async")
        @RateLimit(limit = "2/1m", key = "header:X-Client")
        public void async(@Suspended AsyncResponse response) {
            // Resumed from another thread, after the request thread has returned.
            Thread resumer = new Thread(() -> response.resume("async"));
            resumer.setDaemon(true);
            resumer.start();
        }
    }

    /**
     * The login recipe answering with a page a client may reset after its status line
     * ({@link AfterResponseResources#page}).
     */
    @Path("/login-page")
    public static class LoginPage {
        @GET
        @Path("sync/{outcome}")
        @RateLimit(policy = "contract-login-page", limit = "5/1h", key = "header:X-Client", charge = "after",
                chargeWhen = "401,403")
        public jakarta.ws.rs.core.Response sync(@PathParam("outcome") String outcome) {
            return AfterResponseResources.page("right".equals(outcome) ? 200 : 401);
        }

        @GET
        @Path("async/{outcome}")
        @RateLimit(policy = "contract-login-page", limit = "5/1h", key = "header:X-Client", charge = "after",
                chargeWhen = "401,403")
        public void async(@PathParam("outcome") String outcome, @Suspended AsyncResponse response) {
            Thread resumer =
                    new Thread(() -> response.resume(AfterResponseResources.page("right".equals(outcome) ? 200 : 401)));
            resumer.setDaemon(true);
            resumer.start();
        }
    }

    @Path("/c")
    @RateLimit(limit = "2/1m", key = "header:X-Client")
    public static class ClassLimited {
        @GET
        @Path("a")
        public String a() {
            return "a";
        }

        @GET
        @Path("b")
        @RateLimit(limit = "4/1m", key = "header:X-Client")
        public String b() {
            return "b";
        }
    }

    @Path("/ip")
    public static class IpLimited {
        @GET
        @RateLimit(limit = "2/1m")
        public String get() {
            return "ip";
        }
    }

    @Path("/failure")
    public static class FailureModes {
        @GET
        @Path("open")
        @RateLimit(limit = "2/1m", key = "header:X-Client")
        public String open() {
            return "open";
        }

        @GET
        @Path("closed")
        @RateLimit(limit = "100/1m", key = "header:X-Client", failureMode = FailureMode.CLOSED)
        public String closed() {
            return "closed";
        }
    }

    @Path("/shared")
    public static class Shared {
        @GET
        @RateLimit(limit = "3/1m", policy = "shared", key = "header:X-Client")
        public String get() {
            return "shared";
        }
    }

    @Path("/bad")
    public static class BadLimit {
        @GET
        @RateLimit(limit = "100/minutes")
        public String get() {
            return "never";
        }
    }

    @Path("/cap-local")
    public static class LocalCap {
        @GET
        @RateLimit(limit = "10/1m", policy = "cap-rate", failureMode = FailureMode.LOCAL)
        @RateLimit(limit = "5", policy = "cap-local", algorithm = Algorithm.CONCURRENCY,
                failureMode = FailureMode.LOCAL)
        public String get() {
            return "never";
        }
    }

    @Path("/keys")
    public static class DifferentKeys {
        @GET
        @RateLimit(limit = "1/s", policy = "per-address", key = "ip")
        @RateLimit(limit = "100/1h", policy = "per-user", key = "principal")
        public String get() {
            return "never";
        }
    }

    /** Three overloads of one Java method: each is a resource method of its own, with a budget of its own. */
    @Path("/over")
    public static class Overloads {
        @GET
        @Path("item")
        @RateLimit(limit = "2/1m", key = "header:X-Client")
        public String item() {
            return "item";
        }

        @GET
        @Path("item/{id}")
        @RateLimit(limit = "2/1m", key = "header:X-Client")
        public String item(@PathParam("id") String id) {
            return "item " + id;
        }

        @POST
        @Path("item/{id}")
        @RateLimit(limit = "2/1m", key = "header:X-Client")
        public String item(@PathParam("id") String id, @QueryParam("n") int n) {
            return "item " + id + " x" + n;
        }
    }

    /** Repeated annotations without a policy: one default name each, {@code -1} and {@code -2}. */
    @Path("/repeated")
    public static class Repeated {
        @GET
        @RateLimit(limit = "1/1m", key = "header:X-Client")
        @RateLimit(limit = "5/1h", key = "header:X-Client")
        public String get() {
            return "repeated";
        }
    }

    /** Authenticates {@code X-User} as the principal, as a real authentication filter would, at its priority. */
    @Priority(Priorities.AUTHENTICATION)
    public static class HeaderAuthentication implements ContainerRequestFilter {
        @Override
        public void filter(ContainerRequestContext request) {
            String user = request.getHeaderString("X-User");
            if (user == null) {
                return;
            }
            Principal principal = () -> user;
            request.setSecurityContext(new SecurityContext() {
                @Override
                public Principal getUserPrincipal() {
                    return principal;
                }

                @Override
                public boolean isUserInRole(String role) {
                    return false;
                }

                @Override
                public boolean isSecure() {
                    return false;
                }

                @Override
                public String getAuthenticationScheme() {
                    return "X-User";
                }
            });
        }
    }

    /**
     * Keyed by the request attribute (JAX-RS property) {@code tenant} the application's login set;
     * answers what Sluice put on the request.
     */
    @Path("/fit")
    public static class Fit {
        @GET
        @Path("tenant")
        @RateLimit(policy = "fit-tenant", limit = "1/1m", key = "attribute:tenant")
        public String tenant(@jakarta.ws.rs.core.Context jakarta.servlet.http.HttpServletRequest request) {
            return "ok " + request.getAttribute(dev.sluice.web.RequestAttributes.OUTCOME) + " "
                    + request.getAttribute(dev.sluice.web.RequestAttributes.POLICY) + " "
                    + request.getAttribute(dev.sluice.web.RequestAttributes.REMAINING) + " "
                    + request.getAttribute(dev.sluice.web.RequestAttributes.PARTITION);
        }
    }

    /** The application's own 429, built from scratch: Sluice's headers are added on the way out. */
    @jakarta.ws.rs.ext.Provider
    public static class TooManyRequests implements jakarta.ws.rs.ext.ExceptionMapper<RateLimitExceededException> {
        @Override
        public jakarta.ws.rs.core.Response toResponse(RateLimitExceededException e) {
            return jakarta.ws.rs.core.Response.status(429).type("application/json")
                    .entity("{\"error\":\"slow down\",\"policy\":\"" + e.policy() + "\",\"remaining\":"
                            + e.decision().remaining() + "}").build();
        }
    }
}
