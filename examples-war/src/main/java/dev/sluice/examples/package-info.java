/**
 * The example web application: a plain servlet behind {@code dev.sluice.servlet.RateLimitFilter}
 * (configured in {@code WEB-INF/web.xml}), and Jersey resources annotated with
 * {@code @dev.sluice.jaxrs.RateLimit}. Both take their defaults, the store among them, from the
 * {@code sluice.*} context-params: those of {@code web.xml}, and {@code sluice.store} from the
 * deployer.
 */
package dev.sluice.examples;
