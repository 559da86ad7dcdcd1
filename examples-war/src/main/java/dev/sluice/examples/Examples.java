package dev.sluice.examples;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.jaxrs.RateLimit;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * JAX-RS resources showing {@link RateLimit}: a token bucket, a sliding window, two limits on one
 * method and a fail-closed route. Every limit counts per API key ({@code X-API-Key}), or per
 * client address without one. The numbers are small so that a few curl calls reach them. The demo
 * does not validate the keys, so a client could invent a new one per request and get a new budget
 * each time; a real application checks keys before the limiter or keys by {@code principal}.
 */
@Path("/")
@Produces(MediaType.TEXT_PLAIN + ";charset=UTF-8")
public class Examples {

    /** The caller identity of every example: the API key, else the client address. */
    static final String KEY = "header:X-API-Key,ip";

    /** Token bucket: bursts of 5, refilled at one a second. */
    @GET
    @Path("bucket")
    @RateLimit(policy = "bucket", limit = "1/s", burst = 5, key = KEY)
    public String bucket() {
        return "token bucket: bursts of 5, then 1 per second\n";
    }

    /** Sliding window: 5 in any trailing minute (Cloudflare's two-counter estimate). */
    @GET
    @Path("window")
    @RateLimit(policy = "window", limit = "5/1m", algorithm = Algorithm.SLIDING_WINDOW, key = KEY)
    public String window() {
        return "sliding window: 5 per minute\n";
    }

    /**
     * Two limits decided together: a burst of 3 refilled at 2 a second, and 10 a minute. A
     * request is admitted only if both admit it; a refused one spends nothing from either.
     */
    @GET
    @Path("search")
    @RateLimit(policy = "search", limit = "2/s", burst = 3, key = KEY)
    @RateLimit(policy = "search-minute", limit = "10/1m", algorithm = Algorithm.SLIDING_WINDOW, key = KEY)
    public String search() {
        return "two limits: bursts of 3 at 2 per second, and 10 per minute\n";
    }

    /**
     * Fail closed: 3 orders a minute, and {@code 503} rather than unmetered orders while the
     * store cannot decide (Redis down or late).
     */
    @POST
    @Path("orders")
    @RateLimit(policy = "orders", limit = "3/1m", key = KEY, failureMode = FailureMode.CLOSED)
    public String order() {
        return "order accepted (3 per minute; fails closed)\n";
    }

    /** Not annotated, so not limited: the feature registers nothing here. */
    @GET
    @Path("health")
    public String health() {
        return "ok\n";
    }
}
