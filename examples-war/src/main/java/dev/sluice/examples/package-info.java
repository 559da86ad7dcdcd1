/**
 * The example web application: a plain servlet behind {@code dev.sluice.servlet.RateLimitFilter}
 * (configured in {@code WEB-INF/web.xml}), and Jersey resources annotated with
 * {@code @dev.sluice.jaxrs.RateLimit}. The store of both comes from {@code SLUICE_STORE}, see
 * {@link dev.sluice.examples.StoreSetting}.
 */
package dev.sluice.examples;
