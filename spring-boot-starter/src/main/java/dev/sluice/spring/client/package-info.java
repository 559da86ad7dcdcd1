/**
 * Outbound limiting for Spring's HTTP clients, on {@link dev.sluice.outbound.Permits}:
 * {@link dev.sluice.spring.client.RateLimitClientInterceptor} for {@code RestClient} and
 * {@code RestTemplate} (waits on the calling thread), {@link dev.sluice.spring.client.RateLimitExchangeFilter}
 * for {@code WebClient} (blocks no thread). Each needs only its client on the class path
 * ({@code spring-web}, or {@code spring-webflux}); nothing here is auto-configured: the application
 * builds its {@code Permits} and adds the interceptor or filter to its client.
 */
package dev.sluice.spring.client;
