package dev.sluice.spring.boot;

import dev.sluice.redis.LettuceStore;
import dev.sluice.web.internal.StoreRegistry;
import dev.sluice.web.internal.WebSettings;
import io.lettuce.core.AbstractRedisClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The application's Spring Data Redis {@code RedisConnectionFactory}, when it is Lettuce's, as
 * Sluice's Redis store: every {@code lettuce:} store value, and every {@code redis://} and
 * {@code rediss://} one when Redisson is not on the class path, is served by a {@link LettuceStore}
 * on the factory's own Lettuce client (one connection of the store's on it), instead of a client
 * of Sluice's own; the value still chooses Redis over memory and names the store. Sluice brings
 * neither Redisson nor a second pool, and never shuts the client down: closing the store closes
 * only its connection.
 */
final class LettuceFactoryStores implements StoreBinding {

    private static final Logger LOG = LoggerFactory.getLogger(LettuceFactoryStores.class);

    private final Set<String> stores;
    private final Supplier<RedisConnectionFactory> factory;
    private final boolean redisson;
    private final List<String> bound = new ArrayList<>(); // guarded by this

    /**
     * @param redisson whether Redisson is on the class path: then {@code redis://} values stay
     *                 Redisson's, and only {@code lettuce:} ones use the factory
     */
    LettuceFactoryStores(Set<String> stores, Supplier<RedisConnectionFactory> factory, boolean redisson) {
        this.stores = Set.copyOf(stores);
        this.factory = factory;
        this.redisson = redisson;
    }

    @Override
    public synchronized void bind() {
        if (!bound.isEmpty()) {
            return;
        }
        if (!(factory.get() instanceof LettuceConnectionFactory lettuce)) {
            return;
        }
        List<String> ours = new ArrayList<>();
        for (String store : stores) {
            String value = store.toLowerCase(Locale.ROOT);
            if (value.startsWith("lettuce:")
                    || !redisson && (value.startsWith("redis://") || value.startsWith("rediss://"))) {
                ours.add(store);
            }
        }
        if (ours.isEmpty()) {
            return;
        }
        if (!lettuce.isRunning()) {
            lettuce.start(); // a factory started late (earlyStartup off): its client exists once started
        }
        AbstractRedisClient client = lettuce.getRequiredNativeClient();
        for (String store : ours) {
            StoreRegistry.application().provide(store, LettuceStore.of(client));
            bound.add(store);
            LOG.info("Sluice store '{}': the application's LettuceConnectionFactory", WebSettings.shown(store));
        }
    }

    /** Releases the stores bound; the last user's release closes the store's connection, never the client. */
    synchronized void close() {
        bound.forEach(StoreRegistry.application()::release);
        bound.clear();
    }
}
