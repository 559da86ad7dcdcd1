package dev.sluice.redis;

import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.tck.RateLimitStoreKit;
import dev.sluice.testing.TestRedis;
import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.AfterAll;

import java.util.List;

/**
 * The store test kit on the Lettuce store, every capability: one shared embedded Redis and one
 * Lettuce client of the test's (borrowed, as an application's), the time injected into the
 * scripts; the real-time priorities on three stores, each with a Lettuce client of its own
 * ({@code lettuce:redis://}) and the Redis server's clock.
 */
class LettuceStoreKitTest extends RateLimitStoreKit {

    private static RedisClient client;

    private static synchronized RedisClient client() {
        if (client == null) {
            client = RedisClient.create(TestRedis.shared().url());
        }
        return client;
    }

    @AfterAll
    static void shutdown() {
        if (client != null) {
            client.shutdown();
        }
    }

    @Override
    protected RateLimitStore newStore(TimeSource time) {
        return LettuceStore.forTesting(client(), time);
    }

    @Override
    protected List<RateLimitStore> sharedInstances() {
        String url = "lettuce:" + TestRedis.shared().url();
        return List.of(LettuceStore.connect(url), LettuceStore.connect(url), LettuceStore.connect(url));
    }
}
