package dev.sluice.internal;

import dev.sluice.RateLimitStore;
import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;

import java.util.HashMap;
import java.util.Map;

/**
 * The stores of one web application, shared by name: every filter and resource naming the same
 * {@code store} value gets the same store (one Redisson client), created on first use and closed
 * when the last user releases it. Adapters keep one instance per application (a servlet-context
 * attribute, a JAX-RS feature instance).
 *
 * <p>Thread-safe. Not API: this package may change in any release.
 */
public final class SharedStores {

    private final Map<String, Entry> stores = new HashMap<>();

    private static final class Entry {
        final RateLimitStore store;
        int users;

        Entry(RateLimitStore store) {
            this.store = store;
        }
    }

    /**
     * The store for a {@code store} value ({@code memory}, {@code redis://...}, {@code rediss://...},
     * {@code redisson:PATH}), created if this is its first user.
     *
     * @throws IllegalArgumentException naming the value if it cannot be configured
     */
    public synchronized RateLimitStore acquire(String store) {
        Entry entry = stores.get(store);
        if (entry == null) {
            entry = new Entry(store.equals("memory") ? MemoryStore.create() : RedisStore.connect(store));
            stores.put(store, entry);
        }
        entry.users++;
        return entry.store;
    }

    /** Releases one use of a store; closes it when nobody uses it any more. */
    public synchronized void release(String store) {
        Entry entry = stores.get(store);
        if (entry != null && --entry.users == 0) {
            stores.remove(store);
            entry.store.close();
        }
    }

    /** Closes every store, whoever still uses it (application shutdown). */
    public synchronized void closeAll() {
        stores.values().forEach(entry -> entry.store.close());
        stores.clear();
    }
}
