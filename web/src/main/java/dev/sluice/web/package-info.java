/**
 * The HTTP layer the servlet filter and the JAX-RS feature share, free of either API: the
 * configuration vocabulary's settings, caller resolution (key sources, trusted proxies, IPv6
 * prefixes), the answers a decision becomes (status, {@code RateLimit-*} headers, problem body),
 * and the registry of stores an application's routes share.
 *
 * <p>Not API: the adapters' configuration (init-params, {@code sluice.*} properties, the
 * annotation) is the stable surface; this package may change in any release.
 */
package dev.sluice.web;
