package dev.sluice.memory;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import dev.sluice.internal.Secrets;

import java.util.Set;

/** Provides {@code store=memory}: a {@link MemoryStore} with the default bounds. */
public final class MemoryStoreProvider implements StoreProvider {

    @Override
    public Set<String> schemes() {
        return Set.of("memory");
    }

    @Override
    public void check(String store) {
        if (!store.equals("memory")) {
            throw new IllegalArgumentException(
                    "'store' must be memory, redis://host:port[/db], rediss://host:port[/db] "
                    + "or redisson:PATH, got '" + Secrets.redact(store) + "'");
        }
    }

    @Override
    public RateLimitStore open(String store) {
        check(store);
        return MemoryStore.create();
    }
}
