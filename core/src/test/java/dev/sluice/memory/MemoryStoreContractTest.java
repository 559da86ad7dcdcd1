package dev.sluice.memory;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.TimeSource;
import dev.sluice.testing.RateLimitStoreContract;

/** The store contract on the in-memory store. */
class MemoryStoreContractTest extends RateLimitStoreContract {

    @Override
    protected RateLimitStore newStore(TimeSource time) {
        return MemoryStore.builder().timeSource(time).build();
    }
}
