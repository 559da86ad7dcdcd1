package dev.sluice.redis;

import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.tck.RateLimitStoreKit;
import dev.sluice.testing.Stores;
import dev.sluice.testing.TestRedis;

import java.util.List;

/**
 * The store test kit on the Redis store, every capability: one shared embedded Redis, the time
 * injected into the scripts; the real-time priorities on three stores, each on its own Redisson
 * client and the Redis server's clock.
 */
class RedisStoreKitTest extends RateLimitStoreKit {

    @Override
    protected RateLimitStore newStore(TimeSource time) {
        return RedisStore.forTesting(Stores.client(), time);
    }

    @Override
    protected List<RateLimitStore> sharedInstances() {
        String url = TestRedis.shared().url();
        return List.of(RedisStore.connect(url), RedisStore.connect(url), RedisStore.connect(url));
    }
}
