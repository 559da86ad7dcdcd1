package dev.sluice.web;

/**
 * Names the caller of a request when the {@code key} sources cannot: an identity the application
 * derives itself (a tenant looked up from a certificate, an account behind a session). Called once
 * per request, on the request's thread, after exemptions and {@code methods}; it must be fast and
 * must not block. A caller it names is a budget of its own, so name only identities the
 * application has verified.
 *
 * <pre>{@code
 * KeyResolver tenant = request -> request.attribute("tenant") instanceof Tenant t ? t.id() : null;
 * new RateLimitFilter(limiter).withKeyResolver(tenant);       // servlet filter built in Java
 * new RateLimitFeature(store).withKeyResolver(tenant);        // JAX-RS
 * }</pre>
 *
 * <p>For a request attribute that holds the identity as it is, {@code key=attribute:NAME} needs no
 * code. Both adapters hand the resolver the same view of the request, so one resolver serves the
 * servlet filter and the JAX-RS feature alike.
 */
@FunctionalInterface
public interface KeyResolver {

    /**
     * The caller of this request.
     *
     * @param request the request
     * @return the caller's identity (any text: a long or unusual one is hashed in storage keys;
     *         kept apart from the identities of the {@code key} sources); {@code null} or blank:
     *         the route's {@code key} sources decide
     */
    String caller(RequestView request);
}
