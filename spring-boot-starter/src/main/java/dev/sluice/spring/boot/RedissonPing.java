package dev.sluice.spring.boot;

import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.BaseRedisNodes;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The {@code PING} of {@link SharedStoreHealth} for a store on Redisson, every node of its client;
 * loaded only when Redisson is on the class path (an application on Lettuce alone has none).
 */
final class RedissonPing {

    private static final Duration PING_TIMEOUT = Duration.ofSeconds(1);

    private RedissonPing() {
    }

    /** {@code null} when {@code store} is not on Redisson or every node answers a PING, else why not. */
    static String ping(RateLimitStore store) {
        return store instanceof RedisStore redis ? ping(redis.client()) : null;
    }

    private static String ping(RedissonClient client) {
        try {
            Config config = client.getConfig();
            BaseRedisNodes nodes = config.isClusterConfig() ? client.getRedisNodes(RedisNodes.CLUSTER)
                    : config.isSentinelConfig() ? client.getRedisNodes(RedisNodes.SENTINEL_MASTER_SLAVE)
                    : config.isSingleConfig() ? client.getRedisNodes(RedisNodes.SINGLE)
                    : client.getRedisNodes(RedisNodes.MASTER_SLAVE);
            return nodes.pingAll(PING_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) ? null : "no answer within "
                    + PING_TIMEOUT;
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName(); // its message may name the server; the health shows the URL masked
        }
    }
}
