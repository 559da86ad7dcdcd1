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
 * The health of the Redis stores Sluice's filters and annotated handlers decide on. A store is in
 * trouble when Redis does not answer a {@code PING} (within one second) or when the circuit breaker
 * of a limiter on it is open (it stopped waiting on Redis after repeated failures). What that means
 * for the application depends on its routes:
 *
 * <ul>
 *   <li>a route with {@code failure-mode=closed} answers 503 while the store is out: the contributor
 *       is {@code DOWN};
 *   <li>routes that fail open (the default) or {@code local} still serve every request, unlimited or
 *       limited in this JVM: the contributor stays {@code UP} and says in its details which store
 *       failed and which routes are failing open. Taking such an instance out of a load balancer
 *       (or restarting it) would turn a degraded limiter into an outage of the application, on
 *       every instance at once since they share the store. {@code sluice.health.down-when-failing-open=true}
 *       reports {@code DOWN} anyway.
 * </ul>
 *
 * The in-memory store has no health of its own: no Redis store, {@code UP}. Store URLs are shown
 * with their password masked.
 */
final class RedisStoreHealth implements HealthIndicator {

    private static final Duration PING_TIMEOUT = Duration.ofSeconds(1);

    private final Set<String> storeValues;
    private final Supplier<List<FilterRegistrations.Circuit>> circuits;
    private final boolean downWhenFailingOpen;
    private Map<String, RedisStore> stores; // acquired on the first check; guarded by this

    RedisStoreHealth(Set<String> storeValues, Supplier<List<FilterRegistrations.Circuit>> circuits,
                     boolean downWhenFailingOpen) {
        this.storeValues = Set.copyOf(storeValues);
        this.circuits = circuits;
        this.downWhenFailingOpen = downWhenFailingOpen;
    }

    @Override
    public Health health() {
        Map<String, RedisStore> redis = stores();
        Health.Builder health = Health.up();
        List<FilterRegistrations.Circuit> all = circuits.get();
        for (Map.Entry<String, RedisStore> e : redis.entrySet()) {
            String shown = WebSettings.shown(e.getKey());
            List<FilterRegistrations.Circuit> on = all.stream().filter(c -> c.store().equals(e.getKey())).toList();
            List<String> open = on.stream().filter(c -> c.open().getAsBoolean())
                    .map(FilterRegistrations.Circuit::owner).toList();
            String ping = ping(e.getValue().client());
            String problem = ping != null ? "PING failed: " + ping
                    : open.isEmpty() ? null : "circuit open: " + String.join(", ", open);
            if (problem == null) {
                health.withDetail(shown, "UP");
                continue;
            }
            List<String> closed = on.stream().filter(FilterRegistrations.Circuit::failsClosed)
                    .map(FilterRegistrations.Circuit::owner).toList();
            if (!closed.isEmpty()) {
                health.down().withDetail(shown, problem + "; answering 503: " + String.join(", ", closed));
            } else {
                if (downWhenFailingOpen) {
                    health.down();
                }
                health.withDetail(shown, problem + "; failing open: " + (on.isEmpty() ? "no route"
                        : String.join(", ", on.stream().map(FilterRegistrations.Circuit::owner).toList())));
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
