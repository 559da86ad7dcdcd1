package dev.sluice.redis;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import dev.sluice.internal.Secrets;

import java.util.Set;
import java.util.regex.Pattern;

/**
 * Provides {@code store=redis://host:port[/db]}, {@code rediss://...} and
 * {@code redisson:PATH} (a Redisson YAML file: cluster, sentinel, ...): a {@link RedisStore}.
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
        RedisStore.config(store); // the port's and the database's ranges
    }

    @Override
    public RateLimitStore open(String store) {
        check(store);
        return RedisStore.connect(store);
    }
}
