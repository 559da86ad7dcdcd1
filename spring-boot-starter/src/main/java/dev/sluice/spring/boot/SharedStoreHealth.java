package dev.sluice.spring.boot;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.internal.StoreRegistry;
import dev.sluice.web.internal.WebSettings;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The health of the shared stores Sluice's filters and annotated handlers decide on (Redis on
 * Redisson or on Lettuce, Postgres). A store is in trouble when the circuit breaker of a limiter on
 * it is open (it stopped waiting on the store after repeated failures) or, for a store on Redisson,
 * when Redis does not answer a {@code PING} (within one second). A store on the application's
 * Lettuce factory is not pinged here: Spring Boot's own {@code redis} contributor does that. What that means
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
 * The in-memory store has no health of its own: no shared store, {@code UP}. Store URLs are shown
 * with their password masked.
 */
final class SharedStoreHealth implements HealthIndicator {

    private final Set<String> storeValues;
    private final Supplier<List<FilterRegistrations.Circuit>> circuits;
    private final boolean downWhenFailingOpen;
    private final Function<RateLimitStore, String> ping;
    private Map<String, RateLimitStore> stores; // acquired on the first check; guarded by this

    /**
     * @param ping why a store did not answer its ping, {@code null} when it did or is not pinged
     *             ({@link RedissonPing#ping}; without Redisson on the class path, nothing is pinged)
     */
    SharedStoreHealth(Set<String> storeValues, Supplier<List<FilterRegistrations.Circuit>> circuits,
                      boolean downWhenFailingOpen, Function<RateLimitStore, String> ping) {
        this.storeValues = Set.copyOf(storeValues);
        this.circuits = circuits;
        this.downWhenFailingOpen = downWhenFailingOpen;
        this.ping = ping;
    }

    @Override
    public Health health() {
        Map<String, RateLimitStore> shared = stores();
        Health.Builder health = Health.up();
        List<FilterRegistrations.Circuit> all = circuits.get();
        for (Map.Entry<String, RateLimitStore> e : shared.entrySet()) {
            String shown = WebSettings.shown(e.getKey());
            List<FilterRegistrations.Circuit> on = all.stream().filter(c -> c.store().equals(e.getKey())).toList();
            List<String> open = on.stream().filter(c -> c.open().getAsBoolean())
                    .map(FilterRegistrations.Circuit::owner).toList();
            String failed = ping.apply(e.getValue());
            String problem = failed != null ? "PING failed: " + failed
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

    /** The shared stores among the store values, acquired from the application's registry once. */
    private synchronized Map<String, RateLimitStore> stores() {
        if (stores == null) {
            Map<String, RateLimitStore> shared = new LinkedHashMap<>();
            List<String> others = new ArrayList<>();
            for (String value : storeValues) {
                RateLimitStore store;
                try {
                    store = StoreRegistry.application().acquire(value);
                } catch (RuntimeException e) {
                    continue; // the filter that names it stops start-up, with the property's name
                }
                if (store instanceof MemoryStore) {
                    others.add(value);
                } else {
                    shared.put(value, store);
                }
            }
            others.forEach(StoreRegistry.application()::release);
            stores = shared;
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
