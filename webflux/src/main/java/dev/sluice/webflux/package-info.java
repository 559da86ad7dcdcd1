/**
 * Rate limiting for Spring WebFlux applications: {@link dev.sluice.webflux.RateLimitWebFilter}, a
 * {@code WebFilter} per policy, glue on the adapter seam {@link dev.sluice.web.HttpLimiter} that
 * never blocks an event loop. Configured by Sluice's configuration vocabulary (the Spring Boot
 * starter builds one per {@code sluice.filters.<name>.*} in a reactive application).
 *
 * <p>Compiled against Spring Framework 7. Everything but the filter is package-private.
 */
package dev.sluice.webflux;
