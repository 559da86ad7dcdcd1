package dev.sluice.web;

import dev.sluice.Limit;

import java.util.List;

/**
 * Chooses the limits of one request, for policies that {@code tier} and {@code tier-limits}
 * cannot express (plans looked up in the application's own database, say). Called once per
 * request, on the request's thread, after exemptions and {@code methods}; it must be fast and
 * must not block.
 *
 * <p>Return one of a few lists built once (per plan, say), never new {@link Limit}s per request:
 * the guard builds one limiter per distinct list on first use and keeps it, at most
 * 1,000 of them; a request whose list would be one more is decided by the
 * route's own limits (logged once). Give each list's limits policy names of their own
 * ({@code api.gold}): the policy names the stored state, so two plans sharing a name share a
 * budget.
 *
 * <p>Both adapters hand it the same view of the request, so one resolver serves the servlet
 * filter and the JAX-RS feature alike.
 */
@FunctionalInterface
public interface LimitResolver {

    /**
     * The limits of this request, decided together, all or nothing.
     *
     * @param request the request
     * @return the limits; {@code null}: the route's own limits; empty: unlimited (the store is
     *         not asked, no rate-limit headers)
     */
    List<Limit> limits(RequestView request);
}
