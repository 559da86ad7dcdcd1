/**
 * The HTTP layer the servlet filter and the JAX-RS feature share, free of either API: adapter
 * plumbing.
 *
 * <p>The vocabulary: {@link dev.sluice.web.internal.Parameter}, parsed into a
 * {@link dev.sluice.web.internal.RouteSpec} per route and {@link dev.sluice.web.internal.WebSettings}
 * per application or filter. From them, once per route at start-up, a
 * {@link dev.sluice.web.internal.Guard} (limiter, caller resolution, header style), which turns each
 * request ({@link dev.sluice.web.RequestView}) into an {@link dev.sluice.web.internal.HttpAnswer}.
 * Stores named by {@code store} are shared through the {@link dev.sluice.web.internal.StoreRegistry};
 * default policy names come from {@link dev.sluice.web.internal.PolicyNames}.
 *
 * <p>Not API: the adapters' configuration (init-params, {@code sluice.*} properties, the
 * annotation) and the types in {@code dev.sluice.web} are the stable surface; this package may
 * change in any release, and only Sluice's adapters may use it (a test in core fails when any
 * other module refers to it).
 */
package dev.sluice.web.internal;
