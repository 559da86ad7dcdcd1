package dev.sluice.web.internal;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import dev.sluice.internal.CompletionExecutor;
import dev.sluice.internal.Secrets;
import dev.sluice.internal.Timeouts;

import java.util.HashMap;
import java.util.Map;

/**
 * The stores of one web application, shared by name: every filter and resource naming the same
 * {@code store} value gets the same store (one Redisson client), created on first use and closed
 * when the last user releases it.
 *
 * <p>There is one registry per class loader ({@link #application()}): Sluice's jars live in the
 * application's {@code WEB-INF/lib}, so that is one per web application, shared by the servlet
 * filters and the JAX-RS feature alike, and gone with the application's class loader. Every
 * {@link #acquire} must be paired with a {@link #release}.
 *
 * <p>Thread-safe. Not API: this package may change in any release.
 */
public final class StoreRegistry {

    private static final StoreRegistry APPLICATION = new StoreRegistry();

    private final Map<String, Entry> stores = new HashMap<>();

    /** The registry of this application (of this class loader). */
    public static StoreRegistry application() {
        return APPLICATION;
    }

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
            entry = new Entry(StoreProvider.forStore(store).open(store));
            stores.put(store, entry);
        }
        entry.users++;
        return entry.store;
    }

    /**
     * Serves the {@code store} value with {@code given} (a store on a client the application owns,
     * such as a Spring application's {@code RedissonClient} bean) instead of opening one: the caller
     * holds its first use and {@link #release}s it like any other.
     *
     * @throws IllegalStateException if the value is already open
     */
    public synchronized void provide(String store, RateLimitStore given) {
        if (stores.containsKey(store)) {
            throw new IllegalStateException("store '" + Secrets.redact(store)
                    + "' is already open in this application");
        }
        Entry entry = new Entry(given);
        entry.users = 1;
        stores.put(store, entry);
    }

    /**
     * Releases one use of a store; closes it when nobody uses it any more. When the last store of
     * the application closes, the application is stopping: the limiters' timer thread
     * ({@link Timeouts}) and completion threads ({@link CompletionExecutor}) end too, rather than
     * outliving it by their idle time.
     */
    public synchronized void release(String store) {
        Entry entry = stores.get(store);
        if (entry != null && --entry.users == 0) {
            stores.remove(store);
            entry.store.close();
            if (stores.isEmpty()) {
                Timeouts.shutdown();
                CompletionExecutor.shutdown();
            }
        }
    }

    /** How many stores are open, for tests and monitoring. */
    public synchronized int openStores() {
        return stores.size();
    }
}
