/**
 * Sluice behind Spring Cloud Gateway's {@code RequestRateLimiter} filter (server WebFlux): a
 * {@link dev.sluice.gateway.SluiceRateLimiter} decides each request with Sluice's algorithms, in
 * memory or on a shared store, without blocking a thread, and
 * {@link dev.sluice.gateway.SluiceGatewayAutoConfiguration} provides it as the bean
 * {@code sluiceRateLimiter} from the {@code sluice.gateway.*} properties.
 *
 * <pre>{@code
 * spring.cloud.gateway.server.webflux.routes[0]:
 *   id: api
 *   uri: http://backend:8080
 *   predicates: [ "Path=/api/**" ]
 *   filters:
 *     - name: RequestRateLimiter
 *       args:
 *         rate-limiter: "#{@sluiceRateLimiter}"
 *         key-resolver: "#{@apiKeyResolver}"
 *         sluice-rate-limiter.limit: 10/1s,1000/1h
 * }</pre>
 */
package dev.sluice.gateway;
