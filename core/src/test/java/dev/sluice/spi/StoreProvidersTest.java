package dev.sluice.spi;

import dev.sluice.memory.MemoryStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Stores found by scheme; this module's class path has no sluice-redis, as a memory-only application's. */
class StoreProvidersTest {

    @Test
    void memoryIsProvidedByCore() {
        RateLimitStore store = StoreProvider.forStore("memory").open("memory");
        try {
            assertThat(store).isInstanceOf(MemoryStore.class);
        } finally {
            store.close();
        }
    }

    @Test
    void aRedisStoreWithoutSluiceRedisNamesTheDependencyToAdd() {
        for (String value : new String[] {"redis://127.0.0.1:6379", "rediss://cache:6380/2",
                "redisson:/etc/redisson.yaml"}) {
            assertThatThrownBy(() -> StoreProvider.forStore(value))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("'store' " + value + " needs dev.sluice:sluice-redis on the class path")
                    .hasMessageEndingWith("got '" + value + "'");
        }
    }

    @Test
    void anUnknownSchemeListsTheKnownValues() {
        assertThatThrownBy(() -> StoreProvider.forStore("memcached://127.0.0.1:11211"))
                .hasMessageStartingWith("'store' must be memory, redis://host:port[/db]")
                .hasMessageContaining("memory")
                .hasMessageEndingWith("got 'memcached://127.0.0.1:11211'");
        assertThatThrownBy(() -> StoreProvider.forStore("memory2")).hasMessageEndingWith("got 'memory2'");
    }
}
