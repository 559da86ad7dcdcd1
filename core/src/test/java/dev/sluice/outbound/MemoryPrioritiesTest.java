package dev.sluice.outbound;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.PrioritiesContract;

import java.util.List;

/** Priorities on the memory store: three limiters of one JVM sharing one store. */
class MemoryPrioritiesTest extends PrioritiesContract {

    @Override
    protected List<RateLimitStore> instances() {
        RateLimitStore store = MemoryStore.create();
        return List.of(store, store, store);
    }
}
