package dev.sluice.web;

/**
 * The request attributes (JAX-RS: properties, which a servlet container keeps as request
 * attributes) Sluice sets on every request it decides, for the rest of the application: an
 * access log (Tomcat's {@code AccessLogValve} {@code %{dev.sluice.outcome}r}, Jetty's
 * {@code CustomRequestLog} {@code %{dev.sluice.outcome}attr}, logback-access), an error page
 * ({@code reject=send-error}), or code downstream. A request that is not decided (a method not
 * limited, an exempt client, an unlimited tier) gets none. When several Sluice layers decide one
 * request, the last to decide sets them; a refusal ends the request, so a 429 carries the layer
 * that refused it.
 *
 * <p>These names are public and stable.
 */
public final class RequestAttributes {

    /**
     * {@code dev.sluice.outcome}, a {@code String}: the decision's outcome as the metrics tag it,
     * {@code allowed}, {@code rejected}, {@code shadow_rejected}, {@code unsatisfiable},
     * {@code failed_open}, {@code failed_closed}, {@code local_allowed} or {@code local_rejected}.
     */
    public static final String OUTCOME = "dev.sluice.outcome";
    /**
     * {@code dev.sluice.policy}, a {@code String}: the policy that bound (the one that refused, or
     * the one with the least left); when the store could not decide, the route's policies joined
     * by {@code +}.
     */
    public static final String POLICY = "dev.sluice.policy";
    /**
     * {@code dev.sluice.remaining}, a {@code Long}: what the binding policy has left (0 on a
     * refusal); absent when the store could not decide.
     */
    public static final String REMAINING = "dev.sluice.remaining";
    /**
     * {@code dev.sluice.partition}, a {@code String}: the caller as the draft's partition key
     * {@code pk} hashes it, such as {@code :q0Jx5y8Pq2mUo8cW:}: a keyed hash (its secret drawn when
     * the application starts), so that a log can count one caller's requests without recording
     * who the caller is.
     */
    public static final String PARTITION = "dev.sluice.partition";

    private RequestAttributes() {
    }
}
