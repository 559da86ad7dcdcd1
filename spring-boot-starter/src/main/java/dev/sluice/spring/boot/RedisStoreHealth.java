package dev.sluice.spring.boot;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.web.internal.StoreRegistry;
import dev.sluice.web.internal.WebSettings;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.BaseRedisNodes;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.config.Config;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The health of the Redis stores Sluice's filters and annotated handlers decide on: {@code DOWN}
 * when Redis does not answer a {@code PING} (within one second), or when the circuit breaker of a
 * limiter on it is open (it stopped waiting on Redis after repeated failures); {@code UP}
 * otherwise. A route with {@code failure-mode=open} that lets requests through while Redis is slow
 * is degraded, not down: Redis still answers, and the limiters' own metrics count the failures. The
 * in-memory store has no health of its own: no Redis store, {@code UP}. Store URLs are shown with
 * their password masked.
 */
final class RedisStoreHealth implements HealthIndicator {

    private static final Duration PING_TIMEOUT = Duration.ofSeconds(1);

    private final Set<String> storeValues;
    private final Supplier<List<FilterRegistrations.Circuit>> circuits;
    private Map<String, RedisStore> stores; // acquired on the first check; guarded by this

    RedisStoreHealth(Set<String> storeValues, Supplier<List<FilterRegistrations.Circuit>> circuits) {
        this.storeValues = Set.copyOf(storeValues);
        this.circuits = circuits;
    }

    @Override
    public Health health() {
        Map<String, RedisStore> redis = stores();
        Health.Builder health = Health.up();
        List<FilterRegistrations.Circuit> all = circuits.get();
        for (Map.Entry<String, RedisStore> e : redis.entrySet()) {
            String shown = WebSettings.shown(e.getKey());
            List<String> open = all.stream().filter(c -> c.store().equals(e.getKey()) && c.open().getAsBoolean())
                    .map(FilterRegistrations.Circuit::owner).toList();
            String ping = ping(e.getValue().client());
            if (ping != null) {
                health.down().withDetail(shown, "PING failed: " + ping);
            } else if (!open.isEmpty()) {
                health.down().withDetail(shown, "circuit open: " + String.join(", ", open));
            } else {
                health.withDetail(shown, "UP");
            }
        }
        return health.build();
    }

    /** {@code null} when every node answers a PING, else why not. */
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
            return e.getClass().getSimpleName(); // its message may name the server; the URL is shown masked above
        }
    }

    /** The Redis stores among the store values, acquired from the application's registry once. */
    private synchronized Map<String, RedisStore> stores() {
        if (stores == null) {
            Map<String, RedisStore> redis = new LinkedHashMap<>();
            List<String> others = new ArrayList<>();
            for (String value : storeValues) {
                RateLimitStore store;
                try {
                    store = StoreRegistry.application().acquire(value);
                } catch (RuntimeException e) {
                    continue; // the filter that names it stops start-up, with the property's name
                }
                if (store instanceof RedisStore r) {
                    redis.put(value, r);
                } else {
                    others.add(value);
                }
            }
            others.forEach(StoreRegistry.application()::release);
            stores = redis;
        }
        return stores;
    }

    /** Releases the stores this indicator acquired. */
    synchronized void close() {
        if (stores != null) {
            stores.keySet().forEach(StoreRegistry.application()::release);
            stores = null;
        }
    }
}
