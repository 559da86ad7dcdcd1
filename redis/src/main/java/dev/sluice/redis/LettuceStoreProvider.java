package dev.sluice.redis;

import dev.sluice.internal.Secrets;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;

import java.util.Set;

/**
 * Provides {@code store=lettuce:redis://host:port[/db]} and {@code lettuce:rediss://...}: a
 * {@link LettuceStore} on a Lettuce client of its own. Needs {@code io.lettuce:lettuce-core} on
 * the class path, and no Redisson.
 */
public final class LettuceStoreProvider implements StoreProvider {

    @Override
    public Set<String> schemes() {
        return Set.of("lettuce");
    }

    @Override
    public void check(String store) {
        if (!RedisStoreProvider.present("io.lettuce.core.RedisClient")) {
            throw new IllegalArgumentException("'store' " + Secrets.redact(store)
                    + " needs io.lettuce:lettuce-core on the class path");
        }
        LettuceStore.uri(store);
    }

    @Override
    public RateLimitStore open(String store) {
        check(store);
        return LettuceStore.connect(store);
    }
}
