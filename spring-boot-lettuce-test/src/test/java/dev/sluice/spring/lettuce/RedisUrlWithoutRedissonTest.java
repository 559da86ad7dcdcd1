package dev.sluice.spring.lettuce;

import dev.sluice.redis.LettuceStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Without Redisson on the class path, {@code store=redis://...} is checked and opened on Lettuce:
 * an application that names Redis the usual way needs no Redisson, and no {@code lettuce:} prefix.
 */
class RedisUrlWithoutRedissonTest {

    @Test
    void aRedisUrlIsCheckedAndOpenedOnLettuce() throws Exception {
        StoreProvider provider = StoreProvider.forStore("redis://127.0.0.1:6379");
        assertThatThrownBy(() -> provider.check("redis://app:s3cret@127.0.0.1:70000"))
                .hasMessageContaining("port 70000").hasMessageContaining("'redis://app:***@127.0.0.1:70000'")
                .hasMessageNotContaining("s3cret");
        try (RateLimitStore store = provider.open("redis://127.0.0.1:1")) { // nothing listens: no wait to connect
            assertThat(store).isInstanceOf(LettuceStore.class);
        }
    }
}
