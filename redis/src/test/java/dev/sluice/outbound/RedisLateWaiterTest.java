package dev.sluice.outbound;

import dev.sluice.TimeSource;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.Stores;

import java.time.Duration;

/**
 * {@link LateWaiterKeepsItsPlaceScenarios} on the Redis store: the shared embedded Redis, the time
 * injected. One slot a second: a key's TTL runs in real time, which the test's clock does not move,
 * and one of 100 ms could end before the next booking on a busy machine.
 */
class RedisLateWaiterTest extends LateWaiterKeepsItsPlaceScenarios {

    @Override
    protected Duration interval() {
        return Duration.ofSeconds(1);
    }

    @Override
    protected RateLimitStore newStore(TimeSource time) {
        return RedisStore.forTesting(Stores.client(), time);
    }
}
