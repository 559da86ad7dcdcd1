/**
 * The HTTP layer's API: what applications and adapters code against.
 *
 * <p>Adapters: an {@link dev.sluice.web.HttpLimiter} is built once per route from the configuration
 * vocabulary (a parameter map, as {@code web.xml} init-params, properties and annotations give
 * it); per request, {@link dev.sluice.web.HttpLimiter#check} answers a
 * {@link java.util.concurrent.CompletionStage} of a {@link dev.sluice.web.Verdict}, without
 * blocking, whose {@link dev.sluice.web.Answer} the adapter renders, and whose end it reports for
 * charge-after and concurrency leases. An adapter is glue on these three types and a
 * {@link dev.sluice.web.RequestView} of its requests.
 *
 * <p>Applications: a {@link dev.sluice.web.KeyResolver} names the caller, a
 * {@link dev.sluice.web.LimitResolver} picks a request's limits, both reading a
 * {@link dev.sluice.web.RequestView}; {@link dev.sluice.web.HeaderStyle} chooses the rate-limit
 * headers; {@link dev.sluice.web.RequestAttributes} names the request attributes every decided
 * request carries; the {@link dev.sluice.web.PolicyRegistry} operates policies live.
 *
 * <p>API: these types change only in a major release. Everything else of the HTTP layer is
 * plumbing in {@code dev.sluice.web.internal}, which no public signature here names.
 */
package dev.sluice.web;
