/**
 * Rate limiting for Jakarta REST (JAX-RS) resources: annotate resource methods or classes with
 * {@link dev.sluice.jaxrs.RateLimit} and register {@link dev.sluice.jaxrs.RateLimitFeature}.
 *
 * <p>The public surface is those two types ({@link dev.sluice.jaxrs.ServletClientAddress} is public
 * only because JAX-RS requires providers registered by class to be). The annotation's attributes and the application's
 * {@code sluice.*} properties are Sluice's one configuration vocabulary
 * ({@link dev.sluice.web.internal.Parameter}); each rate-limited method is one {@link dev.sluice.web.internal.Guard},
 * whose answers (headers, {@code Retry-After}, problem bodies) and key resolution are the servlet
 * filter's, so both adapters behave alike.
 */
package dev.sluice.jaxrs;
