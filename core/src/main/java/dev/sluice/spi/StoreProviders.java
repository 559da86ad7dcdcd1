package dev.sluice.spi;

import dev.sluice.internal.Secrets;

import java.util.HashMap;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * The {@link StoreProvider}s on Sluice's class path, by scheme, loaded once per class loader
 * (in a web application: once per application); the lookup behind {@link StoreProvider#forStore}.
 */
final class StoreProviders {

    /** Schemes Sluice's own modules provide, and the artifact to add for each. */
    private static final Map<String, String> KNOWN = Map.of(
            "memory", "dev.sluice:sluice-core",
            "redis", "dev.sluice:sluice-redis",
            "rediss", "dev.sluice:sluice-redis",
            "redisson", "dev.sluice:sluice-redis",
            "lettuce", "dev.sluice:sluice-redis and io.lettuce:lettuce-core",
            "postgresql", "dev.sluice:sluice-postgres");

    private static final Map<String, StoreProvider> BY_SCHEME = load();

    private StoreProviders() {
    }

    private static Map<String, StoreProvider> load() {
        Map<String, StoreProvider> providers = new HashMap<>();
        for (StoreProvider provider : ServiceLoader.load(StoreProvider.class, StoreProvider.class.getClassLoader())) {
            for (String scheme : provider.schemes()) {
                providers.putIfAbsent(scheme, provider);
            }
        }
        return Map.copyOf(providers);
    }

    /**
     * The provider for a {@code store} value, which has checked the value.
     *
     * @throws IllegalArgumentException naming {@code 'store'} and the value if it is malformed or
     *                                  no provider on the class path opens its scheme (then naming
     *                                  the artifact to add, when it is one of Sluice's)
     */
    static StoreProvider forStore(String store) {
        int colon = store.indexOf(':');
        String scheme = colon < 0 ? store : store.substring(0, colon);
        StoreProvider provider = BY_SCHEME.get(scheme);
        if (provider == null) {
            String shown = Secrets.redact(store);
            String artifact = KNOWN.get(scheme);
            if (artifact != null) {
                throw new IllegalArgumentException("'store' " + shown + " needs " + artifact
                        + " on the class path (add that dependency next to the others of Sluice), got '" + shown + "'");
            }
            throw new IllegalArgumentException(
                    "'store' must be memory, redis://host:port[/db], rediss://host:port[/db] "
                    + "or redisson:PATH (or the scheme of another store provider on the class path: "
                    + String.join(", ", BY_SCHEME.keySet().stream().sorted().toList()) + "), got '" + shown + "'");
        }
        provider.check(store);
        return provider;
    }
}
