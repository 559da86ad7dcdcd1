package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import dev.sluice.testing.TestRedis;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code store=lettuce:redis://...}: found by its scheme, checked at start-up naming the value with
 * its password hidden, and opened as a Lettuce store that decides on the real Redis.
 */
class LettuceStoreProviderTest {

    @Test
    void theSchemeFindsTheLettuceProvider() {
        assertThat(StoreProvider.forStore("lettuce:redis://127.0.0.1:6379")).isInstanceOf(LettuceStoreProvider.class);
    }

    @Test
    void aValueIsReadIntoALettuceUri() {
        RedisURI uri = LettuceStore.uri("lettuce:rediss://app:s3cret@redis.internal:6380/3");
        assertThat(uri.getHost()).isEqualTo("redis.internal");
        assertThat(uri.getPort()).isEqualTo(6380);
        assertThat(uri.getDatabase()).isEqualTo(3);
        assertThat(uri.isSsl()).isTrue();
        assertThat(uri.getUsername()).isEqualTo("app");
        assertThat(new String(uri.getPassword())).isEqualTo("s3cret");
        assertThat(LettuceStore.uri("lettuce:redis://:only@h").getUsername()).isNull();
        assertThat(LettuceStore.uri("lettuce:redis://h").getPort()).isEqualTo(6379);
    }

    @Test
    void badValuesAreRefusedNamingThemWithoutThePassword() {
        LettuceStoreProvider provider = new LettuceStoreProvider();
        assertThatThrownBy(() -> provider.check("lettuce:redis://app:s3cret@h:70000"))
                .hasMessageContaining("port 70000").hasMessageContaining("app:***@h")
                .hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> provider.check("lettuce:redis://app:s3cret@h:6379/16"))
                .hasMessageContaining("database '16'").hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> provider.check("lettuce:http://h:6379"))
                .hasMessageContaining("lettuce:redis://host:port[/db]");
        assertThatThrownBy(() -> provider.check("lettuce:redis://h:6379?password=s3cret"))
                .hasMessageNotContaining("s3cret");
    }

    @Test
    void anOpenedStoreDecidesOnRedis() throws Exception {
        Limit two = Limit.of("lettuce-provider", 2, Duration.ofHours(1));
        String caller = "provider-" + UUID.randomUUID();
        RateLimitStore store = new LettuceStoreProvider().open("lettuce:" + TestRedis.shared().url());
        try {
            assertThat(store).isInstanceOf(LettuceStore.class);
            for (boolean expected : new boolean[] {true, true, false}) {
                Decision decision = store.decide(caller, List.of(two)).toCompletableFuture().get(20, TimeUnit.SECONDS);
                assertThat(decision.allowed()).isEqualTo(expected);
            }
        } finally {
            store.close();
        }
    }
}
