package dev.sluice.jaxrs;

import dev.sluice.Algorithm;
import dev.sluice.testing.Gates;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.container.AsyncResponse;
import jakarta.ws.rs.container.Suspended;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import jakarta.ws.rs.ext.ExceptionMapper;

import java.util.Arrays;

/** Resources for {@code charge = "after"} and {@code algorithm = CONCURRENCY}, called by {@link AfterResponseTest}. */
final class AfterResponseResources {

    private AfterResponseResources() {
    }

    /** An application failure that {@link MappedFailureMapper} turns into a 500 response. */
    static final class MappedFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;
    }

    /** Maps {@link MappedFailure} to 500; other exceptions stay unmapped. */
    public static class MappedFailureMapper implements ExceptionMapper<MappedFailure> {
        @Override
        public Response toResponse(MappedFailure exception) {
            return Response.status(500).entity("mapped").build();
        }
    }

    private static final byte[] PIECE = new byte[8 * 1024];

    static {
        Arrays.fill(PIECE, (byte) 'x');
    }

    /**
     * A page written to the entity stream in 8 KB pieces until a write fails, at most 64 MB:
     * larger than any buffer, so the status is on the wire first, and a client that hung up makes
     * the next write throw.
     */
    static Response page(int status) {
        StreamingOutput pieces = out -> {
            for (int i = 0; i < 8 * 1024; i++) {
                out.write(PIECE);
            }
        };
        return Response.status(status).type("text/html").entity(pieces).build();
    }

    /** Runs {@code task} on another thread, after the request thread has returned. */
    private static void later(Runnable task) {
        Thread thread = new Thread(task);
        thread.setDaemon(true);
        thread.start();
    }

    @Path("/after")
    public static class Charged {

        @GET
        @Path("login/{outcome}")
        @RateLimit(policy = "jaxrs-login", limit = "5/1h", key = "header:X-Client", charge = "after",
                chargeWhen = "401,403")
        public Response login(@PathParam("outcome") String outcome) {
            return "right".equals(outcome) ? Response.ok("welcome").build() : Response.status(401).entity("wrong")
                    .build();
        }

        /** The login, answered with a {@link #page} that a client may reset after its status line. */
        @GET
        @Path("login-page/{outcome}")
        @RateLimit(policy = "jaxrs-login-page", limit = "5/1h", key = "header:X-Client", charge = "after",
                chargeWhen = "401,403")
        public Response loginPage(@PathParam("outcome") String outcome) {
            return page("right".equals(outcome) ? 200 : 401);
        }

        /** As {@link #loginPage}, resumed from another thread. */
        @GET
        @Path("async-login-page/{outcome}")
        @RateLimit(policy = "jaxrs-login-page", limit = "5/1h", key = "header:X-Client", charge = "after",
                chargeWhen = "401,403")
        public void asyncLoginPage(@PathParam("outcome") String outcome, @Suspended AsyncResponse response) {
            later(() -> response.resume(page("right".equals(outcome) ? 200 : 401)));
        }

        /** {@code ok}, {@code 503}, {@code mapped} (a mapped exception): answered from another thread. */
        @GET
        @Path("async/{what}")
        @RateLimit(policy = "jaxrs-failures", limit = "3/1h", key = "header:X-Client", charge = "after")
        public void async(@PathParam("what") String what, @Suspended AsyncResponse response) {
            later(() -> {
                switch (what) {
                    case "ok" -> response.resume("ok");
                    case "mapped" -> response.resume(new MappedFailure());
                    default -> response.resume(Response.status(Integer.parseInt(what)).entity(what).build());
                }
            });
        }

        /** {@code mapped} or {@code unmapped}: an exception thrown by the resource. */
        @GET
        @Path("throw/{what}")
        @RateLimit(policy = "jaxrs-failures", limit = "3/1h", key = "header:X-Client", charge = "after")
        public String fail(@PathParam("what") String what) {
            throw "mapped".equals(what) ? new MappedFailure() : new IllegalStateException("unmapped");
        }
    }

    @Path("/cap")
    public static class Capped {

        @GET
        @Path("hold/{gate}")
        @RateLimit(policy = "jaxrs-cap", limit = "5", algorithm = Algorithm.CONCURRENCY, key = "header:X-Client")
        public String hold(@PathParam("gate") String gate) {
            Gates.pass(gate);
            return "held";
        }

        @GET
        @Path("async-hold/{gate}")
        @RateLimit(policy = "jaxrs-cap", limit = "5", algorithm = Algorithm.CONCURRENCY, key = "header:X-Client")
        public void asyncHold(@PathParam("gate") String gate, @Suspended AsyncResponse response) {
            later(() -> {
                Gates.pass(gate);
                response.resume("held");
            });
        }

        @GET
        @Path("quick/{what}")
        @RateLimit(policy = "jaxrs-cap", limit = "5", algorithm = Algorithm.CONCURRENCY, key = "header:X-Client")
        public String quick(@PathParam("what") String what) {
            if ("mapped".equals(what)) {
                throw new MappedFailure();
            }
            if ("unmapped".equals(what)) {
                throw new IllegalStateException("unmapped");
            }
            return "ok";
        }

        /** A rate limit and a cap of one in flight, decided together. */
        @GET
        @Path("both/{gate}")
        @RateLimit(policy = "jaxrs-both-rate", limit = "3/1h", key = "header:X-Client")
        @RateLimit(policy = "jaxrs-both-cap", limit = "1", algorithm = Algorithm.CONCURRENCY, key = "header:X-Client",
                lease = "10s")
        public String both(@PathParam("gate") String gate) {
            if (!gate.equals("none")) {
                Gates.pass(gate);
            }
            return "both";
        }
    }
}
