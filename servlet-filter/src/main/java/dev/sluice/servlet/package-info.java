/**
 * Rate limiting for Servlet applications: {@link dev.sluice.servlet.RateLimitFilter}, one
 * {@code <filter>} per policy, configured by {@code web.xml} init-params in Sluice's one
 * configuration vocabulary ({@link dev.sluice.web.internal.Parameter}), or built in Java around a
 * {@link dev.sluice.RateLimiter}.
 *
 * <p>Compiled against Servlet 5.0, so the same jar runs in Jakarta EE 9, 10 and 11 containers.
 * Everything but the filter is package-private.
 */
package dev.sluice.servlet;
