/**
 * The HTTP layer the servlet filter and the JAX-RS feature share, free of either API.
 *
 * <p>The vocabulary: {@link dev.sluice.web.Parameter}, parsed into a
 * {@link dev.sluice.web.RouteSpec} per route and {@link dev.sluice.web.WebSettings} per
 * application or filter. From them, once per route at start-up, a {@link dev.sluice.web.Guard}
 * (limiter, caller resolution, header style), which turns each request
 * ({@link dev.sluice.web.RequestView}) into an {@link dev.sluice.web.HttpAnswer}. Stores named by
 * {@code store} are shared through the {@link dev.sluice.web.StoreRegistry}; default policy names
 * come from {@link dev.sluice.web.PolicyNames}.
 *
 * <p>Not API: the adapters' configuration (init-params, {@code sluice.*} properties, the
 * annotation) is the stable surface; this package may change in any release.
 */
package dev.sluice.web;
