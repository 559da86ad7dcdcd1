package dev.sluice.jaxrs;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Rate-limits a JAX-RS resource method, or every resource method of a class, once
 * {@link RateLimitFeature} is registered. The attributes are the route part of the Sluice
 * configuration vocabulary and meet the same checks as {@code web.xml} init-params, so
 * {@code limit = "100/minutes"} fails application start-up with the same message.
 *
 * <pre>{@code
 * @Path("/search")
 * public class Search {
 *     @GET
 *     @RateLimit(limit = "10/s", burst = 20)                       // decided together with...
 *     @RateLimit(limit = "1000/1h", algorithm = Algorithm.SLIDING_WINDOW)  // ...this, atomically
 *     public String search(@QueryParam("q") String q) { ... }
 *
 *     @POST
 *     @RateLimit(limit = "5/1m", key = "principal,ip", failureMode = FailureMode.CLOSED)
 *     public void reindex() { ... }
 *
 *     @POST @Path("/login")                                   // counts failed logins only
 *     @RateLimit(limit = "5/15m", key = "ip", charge = "after", chargeWhen = "401,403")
 *     public Response login(Credentials c) { ... }
 *
 *     @GET @Path("/report")                                   // at most 2 in flight per caller
 *     @RateLimit(limit = "2", algorithm = Algorithm.CONCURRENCY, lease = "60s", key = "principal")
 *     public Report report() { ... }
 * }
 * }</pre>
 *
 * <p>How annotations combine:
 * <ul>
 *   <li>Annotations on a method replace those on its class; a class's annotations apply to each of
 *       its methods that has none.
 *   <li>Interfaces and superclasses (e.g. interface-first APIs generated from OpenAPI) follow
 *       Jakarta REST's annotation inheritance: the method's annotations are looked up on the first
 *       declaration of the method (same name and parameter types) that has {@code @RateLimit} or
 *       JAX-RS annotations of its own (on it or its parameters), searching the resource class, its
 *       superclasses, then its interfaces. So an implementation method without JAX-RS annotations
 *       inherits the interface method's {@code @RateLimit}; one with JAX-RS annotations of its own
 *       (say {@code @GET}) hides all of the interface method's, this one too (logged as a warning at
 *       start-up). Class annotations: the resource class's own, else the first superclass's, else
 *       the first interface's.
 *   <li>Repeated annotations on one element are decided together, atomically, in one store round
 *       trip: a request is admitted only if every limit admits it, and a rejected request consumes
 *       nothing from any of them. They must therefore name the same {@link #key()}; different ones
 *       fail start-up, naming both.
 *   <li>If any of them says {@link FailureMode#CLOSED}, the method fails closed; else if any says
 *       {@link FailureMode#LOCAL}, the method decides locally while the store fails. A
 *       {@link dev.sluice.Algorithm#CONCURRENCY} limit cannot decide locally (its leases are held
 *       in the store alone): one that says {@code LOCAL} fails start-up.
 *   <li>Without {@link #policy()}, each resource method gets its own budget (overloads and
 *       same-named classes of other packages included) under a default name
 *       {@code <SimpleClassName>.<method>~<hash>}, where {@code <hash>} is the first 8 hex digits
 *       of the SHA-256 of {@code <binary class name>.<method>(<parameter types>)}, e.g.
 *       {@code Orders.get~66b80d0a} for {@code com.example.Orders.get(java.lang.String)}; with
 *       {@code -1}, {@code -2}, ... appended for repeated annotations. The name depends on the code
 *       only, so every node and restart of an application meets the same stored budget. Give several
 *       methods (or a class annotation) one explicit policy name to share one budget.
 * </ul>
 *
 * <p>On rejection the request is answered {@code 429} with {@code Retry-After}; see
 * {@link RateLimitFeature} for the HTTP behaviour and the application-wide settings
 * ({@code sluice.store}, {@code sluice.timeout}, {@code sluice.headers}, {@code sluice.partition-key},
 * {@code sluice.trusted-proxies}, {@code sluice.forwarded-header}, {@code sluice.ipv6-prefix},
 * {@code sluice.mode}, {@code sluice.metrics}, {@code sluice.local-share}, {@code sluice.tier},
 * {@code sluice.exempt}, {@code sluice.reject}: {@code problem} or {@code exception}, see
 * {@link RateLimitExceededException}).
 *
 * <p>Tiers: {@link #tiers()} names limits for some callers; the application property
 * {@code sluice.tier} says how a request's tier is found ({@code role}: the first tier named here
 * whose role the {@code SecurityContext} grants; {@code attribute:NAME}: a request property set by
 * the application's authentication filter; {@code header:NAME}: a header, to be trusted only
 * behind your own proxy). A request of no named tier gets {@link #limit()}:
 *
 * <pre>{@code
 * @GET
 * @RateLimit(limit = "100/1h", key = "principal,ip", tiers = {"premium:1000/1h", "internal:unlimited"})
 * public List<Report> reports() { ... }          // with property("sluice.tier", "role")
 * }</pre>
 *
 * <p>Clients in the networks of {@code sluice.exempt} are never limited, never counted and get
 * no rate-limit headers.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@Repeatable(RateLimit.List.class)
public @interface RateLimit {

    /**
     * {@code <count>/<period>}: {@code 10/s}, {@code 100/1m}, {@code 20/500ms}, {@code 5000/1h},
     * {@code 1000/1d}; with {@code algorithm = Algorithm.CONCURRENCY}, the most requests in flight,
     * such as {@code 10}.
     */
    String limit();

    /**
     * Bucket capacity for {@link Algorithm#TOKEN_BUCKET} and {@link Algorithm#GCRA}, at least 1;
     * {@code 0} (the default) means the count of {@link #limit()}. Not allowed with the window and
     * log algorithms.
     */
    long burst() default 0;

    /** How requests are counted; default {@link Algorithm#TOKEN_BUCKET}. */
    Algorithm algorithm() default Algorithm.TOKEN_BUCKET;

    /**
     * Where the caller's identity comes from, tried in order, first present wins:
     * {@code header:NAME}, {@code principal}, {@code param:NAME} (query parameter),
     * {@code attribute:NAME} (a request property the application's authentication set), {@code ip};
     * default {@code ip}. A header or parameter value is the client's own choice: with
     * {@code header:X-API-Key,ip} every invented key is a fresh budget, so validate keys before
     * this filter runs (an authentication filter that rejects unknown keys, then {@code principal}),
     * or limit the route by {@code ip} as well, in a second resource-level limit of its own.
     * Sources joined by {@code +} are one identity, all required ({@code ip+header:X-User}; a request
     * missing a part falls to the next alternative); {@code global} alone is one budget for everyone.
     */
    String key() default "ip";

    /** Units one request spends, at least 1 and at most the capacity; default 1. */
    long cost() default 1;

    /**
     * The limit's name in storage keys and headers, 1 to 64 of {@code A-Z a-z 0-9 . _ ~ -}, used
     * exactly as given; default: {@code <SimpleClassName>.<method>~<hash>}, unique per resource
     * method (see the class description).
     */
    String policy() default "";

    /**
     * What to do when the store fails or is late: allow ({@code OPEN}, default), answer 503
     * ({@code CLOSED}), or decide in this JVM with the limits scaled by {@code sluice.local-share}
     * ({@code LOCAL}).
     */
    FailureMode failureMode() default FailureMode.OPEN;

    /**
     * Named tiers, each {@code name:<count>/<period>} or {@code name:unlimited}, such as
     * {@code {"premium:1000/1h", "internal:unlimited"}} (the {@code tier-limits} parameter); the
     * property {@code sluice.tier} picks a request's tier. Each tier counts under its own policy,
     * {@code <policy>/<tier>} (a name no configured policy can hold), with the algorithm and cost
     * of this annotation and a burst of its count; an unlimited tier never asks the store and gets
     * no rate-limit headers. Default: none.
     */
    String[] tiers() default {};

    /**
     * The HTTP methods limited, any method tokens, such as {@code {"POST", "PUT"}} or
     * {@code {"PROPFIND"}}: for a class annotation over resource methods of several methods;
     * requests of the others pass untouched (not counted, no rate-limit headers). Naming
     * {@code GET} limits {@code HEAD} too, which the runtime answers with the {@code @GET} method.
     * Default: all. Repeated annotations must name the same methods.
     */
    String[] methods() default {};

    /**
     * When the request is charged: {@code "before"} it runs (the default), or {@code "after"} its
     * response status is known, counting only the statuses of {@link #chargeWhen()} (see
     * {@link RateLimitFeature} for where the status is seen). Repeated annotations must agree.
     */
    String charge() default "before";

    /**
     * With {@code charge = "after"}, the statuses that are charged: codes and classes such as
     * {@code "401,403"} or {@code "4xx"}; blank (the default) means {@code "4xx,5xx"}.
     */
    String chargeWhen() default "";

    /**
     * With {@code algorithm = Algorithm.CONCURRENCY} (and {@link #limit()} a plain number of
     * requests in flight, such as {@code "10"}), the longest a request holds its place, such as
     * {@code "30s"}; blank (the default) means {@code 30s}.
     */
    String lease() default "";

    /** The container of repeated {@link RateLimit} annotations; write the annotations, not this. */
    @Documented
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.TYPE, ElementType.METHOD})
    @interface List {
        /** The repeated annotations, in source order. */
        RateLimit[] value();
    }
}
