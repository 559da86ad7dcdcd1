/**
 * Outbound limiting: calls this application makes to a rate-limited provider wait for a permit
 * ({@link dev.sluice.RateLimiter#acquire}) instead of being refused, so that every instance sharing
 * a store stays within the provider's quota together. {@link dev.sluice.outbound.Permits} is the
 * policy (a limiter and the longest wait); {@link dev.sluice.outbound.RateLimitedHttpClient}
 * decorates the JDK's {@link java.net.http.HttpClient}; the JAX-RS client filter is
 * {@code dev.sluice.jaxrs.RateLimitClientFilter} in {@code sluice-jaxrs-feature}. In core because
 * {@code java.net.http} is part of the JDK: no dependency is added.
 */
package dev.sluice.outbound;
