/**
 * The few HTTP-layer types an application codes against, shared by the servlet filter and the
 * JAX-RS feature: a {@link dev.sluice.web.KeyResolver} names the caller, a
 * {@link dev.sluice.web.LimitResolver} picks a request's limits, both reading a
 * {@link dev.sluice.web.RequestView}; {@link dev.sluice.web.HeaderStyle} chooses the rate-limit
 * headers; {@link dev.sluice.web.RequestAttributes} names the request attributes every decided
 * request carries.
 *
 * <p>API: these types change only in a major release. Everything else of the HTTP layer is
 * plumbing in {@code dev.sluice.web.internal}.
 */
package dev.sluice.web;
