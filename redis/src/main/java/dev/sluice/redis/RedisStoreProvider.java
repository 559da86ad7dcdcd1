package dev.sluice.redis;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import dev.sluice.internal.Secrets;

import java.util.Set;
import java.util.regex.Pattern;

/**
 * Provides {@code store=redis://host:port[/db]}, {@code rediss://...} and
 * {@code redisson:PATH} (a Redisson YAML file: cluster, sentinel, ...): a {@link RedisStore}; or,
 * when Redisson is not on the class path and Lettuce is, {@code redis://} and {@code rediss://}
 * as a {@link LettuceStore}.
 */
public final class RedisStoreProvider implements StoreProvider {

    private static final Pattern URI = Pattern.compile("rediss?://([^@/\\s]*@)?[^:/\\s]+(:\\d{1,5})?(/\\d{1,2})?/?");

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redisson");
    }

    @Override
    public void check(String store) {
        if (store.startsWith("redisson:") && store.length() > "redisson:".length()) {
            return;
        }
        if (!URI.matcher(store).matches()) {
            throw new IllegalArgumentException("'store' must be memory, redis://host:port[/db], "
                    + "rediss://host:port[/db] or redisson:PATH, got '" + Secrets.redact(store) + "'");
        }
        if (lettuceInstead(store)) {
            LettuceStore.address(store, store); // the port's and the database's ranges
            return;
        }
        RedisStore.config(store); // the port's and the database's ranges
    }

    /** Whether a {@code redis://} value is to be opened on Lettuce: Redisson is absent, Lettuce present. */
    private static boolean lettuceInstead(String store) {
        return !store.startsWith("redisson:") && !present("org.redisson.api.RedissonClient")
                && present("io.lettuce.core.RedisClient");
    }

    /** Whether a class is on this module's class path, without initialising it. */
    static boolean present(String className) {
        try {
            Class.forName(className, false, RedisStoreProvider.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    @Override
    public RateLimitStore open(String store) {
        check(store);
        return lettuceInstead(store) ? LettuceStore.connect(LettuceStore.SCHEME + store) : RedisStore.connect(store);
    }
}
