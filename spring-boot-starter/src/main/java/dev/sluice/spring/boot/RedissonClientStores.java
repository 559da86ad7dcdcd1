package dev.sluice.spring.boot;

import dev.sluice.redis.RedisStore;
import dev.sluice.web.internal.StoreRegistry;
import dev.sluice.web.internal.WebSettings;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The application's own {@code RedissonClient} bean as Sluice's Redis store: when the application
 * has one, every Redis {@code store} value of its filters and handlers ({@code redis://},
 * {@code rediss://}, {@code redisson:}) is served by a store on that client instead of a client of
 * Sluice's own; the value still chooses Redis over memory and names the store (in the registry,
 * the health details). The client stays the application's: Sluice never shuts it down.
 */
final class RedissonClientStores implements StoreBinding {

    private static final Logger LOG = LoggerFactory.getLogger(RedissonClientStores.class);

    private final Set<String> stores;
    private final Supplier<RedissonClient> client;
    private final List<String> bound = new ArrayList<>(); // guarded by this

    RedissonClientStores(Set<String> stores, Supplier<RedissonClient> client) {
        this.stores = Set.copyOf(stores);
        this.client = client;
    }

    @Override
    public synchronized void bind() {
        if (!bound.isEmpty()) {
            return;
        }
        RedissonClient redisson = client.get();
        if (redisson == null) {
            return;
        }
        for (String store : stores) {
            String scheme = store.toLowerCase(Locale.ROOT);
            if (scheme.startsWith("redis://") || scheme.startsWith("rediss://") || scheme.startsWith("redisson:")) {
                StoreRegistry.application().provide(store, RedisStore.of(redisson));
                bound.add(store);
                LOG.info("Sluice store '{}': the application's RedissonClient bean", WebSettings.shown(store));
            }
        }
    }

    /** Releases the stores bound; the last user's release closes the store, never the client. */
    synchronized void close() {
        bound.forEach(StoreRegistry.application()::release);
        bound.clear();
    }
}
