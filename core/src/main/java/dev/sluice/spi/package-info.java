/**
 * The store service provider interface: the types a store author implements or builds on, apart
 * from the API an application uses.
 *
 * <p>Audience: authors of a {@link dev.sluice.spi.RateLimitStore} (and its
 * {@link dev.sluice.spi.StoreProvider}, found by {@link java.util.ServiceLoader} from the scheme of a
 * {@code store} value). An application meets these types only as a handle: it passes a store it
 * opened to {@link dev.sluice.RateLimiter.Builder#store} and closes it. Building blocks every store
 * shares: a limit compiled once per instance ({@link dev.sluice.spi.CompiledLimit}) and the storage
 * key of a limit's state ({@link dev.sluice.spi.LimitKeys}); {@link dev.sluice.spi.ImmediateStore}
 * marks a store that answers without waiting.
 *
 * <p>Stability: an SPI, versioned with the API but for fewer readers; a method added to an
 * interface here has a default, so existing stores keep compiling.
 */
package dev.sluice.spi;
