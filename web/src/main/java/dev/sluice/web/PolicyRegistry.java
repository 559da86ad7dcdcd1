package dev.sluice.web;

import java.util.List;
import java.util.Optional;

/**
 * Every policy one web application's filters and JAX-RS features built, live: to see them, to
 * reset a caller and to change a limit while the application runs. The servlet filter keeps the
 * application's registry in the {@code ServletContext} attribute {@link #ATTRIBUTE}; a JAX-RS
 * feature keeps one of its own ({@code RateLimitFeature.policies()}). The consoles
 * ({@code dev.sluice.servlet.ConsoleServlet}, {@code dev.sluice.jaxrs.ConsoleResource}) are a page
 * and a JSON API on it.
 *
 * <p>An override is kept in the store the policy counts in, so that every instance sharing that
 * store applies it: on Redis within {@link #REFRESH_SECONDS} seconds (each instance reads the
 * overrides on a background refresh, never per decision) and until it is cleared, restarts
 * included; on the memory store, in this JVM only. A changed limit follows the stores' rules for
 * a changed limit: what a caller already used carries over, clamped to the new capacity.
 *
 * <p>Thread-safe.
 */
public interface PolicyRegistry {

    /** The {@code ServletContext} attribute holding the servlet filters' registry. */
    String ATTRIBUTE = "dev.sluice.web.PolicyRegistry";

    /** How often, at most, each instance reads the overrides from its store, in seconds. */
    int REFRESH_SECONDS = 2;

    /** Every policy, by name. */
    List<PolicyView> policies();

    /** One policy, if the application has it. */
    Optional<PolicyView> policy(String name);

    /**
     * Deletes a caller's state under one policy, in the store and in this instance's copies of
     * recent rejections (another instance's copy of a Redis rejection lives at most its
     * {@code localRejectionTtl}, 1 s by default), so that its next request starts with a whole
     * budget. The caller is given as a client sends it: an address (an IPv6 one is keyed by its
     * {@code ipv6-prefix} network), a header, parameter or attribute value, a user name, or a
     * composite key's parts joined by {@code +}; for {@code key=global}, anything. Every identity
     * it may be under the policy's {@code key} sources is reset.
     *
     * @return the identities reset, such as {@code ip~192.0.2.1}
     * @throws IllegalArgumentException if there is no such policy or the caller fits none of its key sources
     * @throws IllegalStateException    if the store failed; resetting again is harmless
     */
    List<String> reset(String policy, String caller);

    /**
     * Overrides a policy's limit on every instance sharing its store, parsed and checked as the
     * {@code limit} and {@code burst} parameters are; a bad value changes nothing. Logged once at
     * INFO with {@code principal}.
     *
     * @param limit     {@code <count>/<period>}, such as {@code 200/1m}
     * @param burst     the bucket's capacity, or {@code null}: the count
     * @param principal who asks, for the log and the console
     * @throws IllegalArgumentException with the parameter's message if a value is bad, or if there is no such policy
     * @throws IllegalStateException    if the store failed to keep it
     */
    void override(String policy, String limit, String burst, String principal);

    /**
     * Clears a policy's override on every instance sharing its store: its configured limit decides
     * again. Logged once at INFO with {@code principal}.
     *
     * @throws IllegalArgumentException if there is no such policy
     * @throws IllegalStateException    if the store failed
     */
    void clearOverride(String policy, String principal);
}
