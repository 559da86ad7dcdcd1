package dev.sluice.testing;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.TimeSource;
import dev.sluice.memory.MemoryStore;
import dev.sluice.redis.RedisStore;
import org.redisson.api.RedissonClient;

import java.time.Duration;

/** The two stores, each built on an injected clock, for suites that run against both. */
public enum Stores {
    MEMORY {
        @Override
        public RateLimitStore create(TimeSource time) {
            return MemoryStore.builder().timeSource(time).build();
        }
    },
    REDIS {
        @Override
        public RateLimitStore create(TimeSource time) {
            return RedisStore.forTesting(client(), time);
        }
    };

    /**
     * The timeout of suites that test decisions rather than deadlines: long enough that a busy
     * two-core CI machine never turns a slow answer into a failure decision.
     */
    public static final Duration PATIENT = Duration.ofSeconds(20);

    private static RedissonClient client;

    /** A store that reads {@code time}. */
    public abstract RateLimitStore create(TimeSource time);

    /** The Redisson client the Redis stores share (one per test JVM). */
    public static synchronized RedissonClient client() {
        if (client == null) {
            client = TestRedis.shared().newClient();
            Runtime.getRuntime().addShutdownHook(new Thread(client::shutdown));
        }
        return client;
    }
}
