package dev.sluice.tck;

import dev.sluice.TimeSource;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;

/**
 * The kit on the in-memory store, every capability. It runs here rather than in sluice-core: the
 * kit depends on core, so core's own tests cannot depend on the kit.
 */
class MemoryStoreKitTest extends RateLimitStoreKit {

    @Override
    protected RateLimitStore newStore(TimeSource time) {
        return MemoryStore.builder().timeSource(time).build();
    }
}
