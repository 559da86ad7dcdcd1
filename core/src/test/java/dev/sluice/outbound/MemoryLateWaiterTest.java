package dev.sluice.outbound;

import dev.sluice.TimeSource;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;

/** {@link LateWaiterKeepsItsPlaceScenarios} on the memory store. */
class MemoryLateWaiterTest extends LateWaiterKeepsItsPlaceScenarios {

    @Override
    protected RateLimitStore newStore(TimeSource time) {
        return MemoryStore.builder().timeSource(time).build();
    }
}
