package dev.sluice.spi;

import java.util.Set;

/**
 * Opens the {@link RateLimitStore} that a {@code store} setting names. The web layer finds
 * providers with {@link java.util.ServiceLoader} by the setting's scheme, so a store lives in its
 * own artifact and an application that does not use it does not carry its dependencies:
 * {@code sluice-core} provides {@code memory}, {@code sluice-redis} provides {@code redis://},
 * {@code rediss://} and {@code redisson:}, {@code sluice-postgres} provides {@code postgresql://}
 * and {@code jdbc:postgresql:}.
 *
 * <p>A provider is registered in {@code META-INF/services/dev.sluice.spi.StoreProvider}, is public,
 * has a public no-argument constructor and is stateless.
 *
 * <p>Audience: store authors; applications name a store in configuration instead.
 */
public interface StoreProvider {

    /**
     * The provider on Sluice's class path for a {@code store} value, which has checked the value
     * ({@link #check}): {@code memory} is core's, {@code redis://}, {@code rediss://} and
     * {@code redisson:} are {@code sluice-redis}'s.
     *
     * @throws IllegalArgumentException naming {@code 'store'} and the value if it is malformed or no
     *                                  provider on the class path opens its scheme; for one of
     *                                  Sluice's schemes the message names the artifact to add
     */
    static StoreProvider forStore(String store) {
        return StoreProviders.forStore(store);
    }

    /**
     * The schemes this provider opens: a {@code store} value's text before its first {@code ':'},
     * or the whole value when it has none ({@code memory}).
     */
    Set<String> schemes();

    /**
     * Checks a value at start-up, without connecting to anything: whether the store answers is
     * a matter for the failure mode, not for start-up.
     *
     * @throws IllegalArgumentException naming {@code 'store'} and the value if it is malformed; a
     *                                  password in the value is never written into a message (nor
     *                                  into a cause's): Sluice's own providers write it
     *                                  {@code redis://app:***@host:6379}
     */
    void check(String store);

    /**
     * Opens a store for a value that {@link #check} accepted. The caller owns it and closes it.
     *
     * @throws IllegalArgumentException naming {@code 'store'} and the value if it cannot be configured
     */
    RateLimitStore open(String store);
}
