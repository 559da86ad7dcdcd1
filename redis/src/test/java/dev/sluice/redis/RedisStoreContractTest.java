package dev.sluice.redis;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.TimeSource;
import dev.sluice.testing.RateLimitStoreContract;
import dev.sluice.testing.Stores;

/** The store contract on the Redis store (one shared embedded Redis, time injected into the script). */
class RedisStoreContractTest extends RateLimitStoreContract {

    @Override
    protected RateLimitStore newStore(TimeSource time) {
        return RedisStore.forTesting(Stores.client(), time);
    }
}
