package dev.sluice.redis;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.PrioritiesContract;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterEach;

import java.util.ArrayList;
import java.util.List;

/** Priorities on Redis: three instances, each a store on its own Redisson client, on the Redis server's clock. */
class RedisPrioritiesTest extends PrioritiesContract {

    private final List<RedisStore> stores = new ArrayList<>();

    @Override
    protected List<RateLimitStore> instances() {
        for (int i = 0; i < 3; i++) {
            stores.add(RedisStore.connect(TestRedis.shared().url()));
        }
        return List.copyOf(stores);
    }

    @AfterEach
    void close() {
        stores.forEach(RedisStore::close);
    }
}
