/**
 * Sluice: rate limiting for Java web applications.
 *
 * <p>A {@link dev.sluice.RateLimiter} decides "may this caller spend its cost now?" against one or
 * several {@link dev.sluice.Limit}s, each counted by one of five {@link dev.sluice.Algorithm}s,
 * in a {@link dev.sluice.spi.RateLimitStore}: {@link dev.sluice.memory.MemoryStore} for one JVM or
 * {@code dev.sluice.redis.RedisStore} (artifact {@code sluice-redis}) for many. Every decision is one immutable
 * {@link dev.sluice.Decision}; a rejection is a value, never an exception, and consumes nothing.
 * When the store fails or is late, the {@link dev.sluice.FailureMode} decides.
 *
 * <p>Units: time in microseconds internally, {@link java.time.Duration} in the API. Configuration
 * text (web.xml, JAX-RS properties, annotations) is parsed by the web layer ({@code sluice-web}),
 * which finds the store a {@code store} value names through {@link dev.sluice.spi.StoreProvider}.
 */
package dev.sluice;
