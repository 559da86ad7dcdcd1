package dev.sluice.web.internal;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StoreRegistryTest {

    @Test
    void usersOfOneStoreValueShareOneClientClosedByTheLastRelease() {
        StoreRegistry stores = StoreRegistry.application();
        String url = TestRedis.shared().url();
        int before = stores.openStores();
        RateLimitStore first = stores.acquire(url);
        RateLimitStore second = stores.acquire(url);
        assertThat(second).isSameAs(first);
        assertThat(stores.openStores()).isEqualTo(before + 1);

        stores.release(url);
        assertThat(((RedisStore) first).client().isShutdown()).isFalse();
        stores.release(url);
        assertThat(((RedisStore) first).client().isShutdown()).isTrue();
        assertThat(stores.openStores()).isEqualTo(before);
    }

    @Test
    void aBadStoreValueIsNamed() {
        assertThatThrownBy(() -> StoreRegistry.application().acquire("redisson:/missing.yaml"))
                .hasMessageContaining("redisson:/missing.yaml");
    }
}
