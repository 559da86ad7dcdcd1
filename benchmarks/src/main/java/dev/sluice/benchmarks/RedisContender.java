package dev.sluice.benchmarks;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.internal.Keys;
import dev.sluice.spi.LimitKeys;
import dev.sluice.redis.LettuceStore;
import dev.sluice.redis.RedisStore;
import dev.sluice.spi.RateLimitStore;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.distributed.proxy.optimization.Optimizations;
import io.github.bucket4j.redis.redisson.Bucket4jRedisson;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One way of deciding "may key i spend one unit now?" on Redis, set up over a fixed array of
 * keys so that nothing but the decision itself (key building, the round trip, the script and the
 * answer's parsing) lands in the measurement.
 *
 * <p>Every contender gets the same limit, {@value #RATE} per second with a burst of as many: high
 * enough that the measured path is the allowed one for every algorithm at the rates this harness
 * reaches, so all of them do the same work (read, refill, write, set a TTL).
 */
public abstract class RedisContender implements AutoCloseable {

    /** Units per second, and the burst, of every contender's limit. */
    public static final long RATE = 1_000_000;

    /** The names accepted by {@link #create}, in the order tables show them. */
    public static final String[] NAMES = {
        "sluice-token-bucket", "sluice-gcra", "sluice-sliding-window", "sluice-fixed-window", "sluice-sliding-log",
        "sluice-lettuce", "floor", "bucket4j", "bucket4j-batching", "redisson",
    };

    final String[] keys;

    RedisContender(String[] keys) {
        this.keys = keys;
    }

    /** Decides one unit for {@code keys[i]}, blocking until the answer. */
    public abstract boolean decide(int i);

    /** Decides one unit for {@code keys[i]} without blocking. */
    public abstract CompletableFuture<Boolean> decideAsync(int i);

    /** The Redis key holding {@code keys[i]}'s state, for MEMORY USAGE. */
    public abstract String redisKey(int i);

    /** Store failures seen (Sluice counts timeouts and errors; the others throw instead). */
    public long failures() {
        return 0;
    }

    @Override
    public void close() {
    }

    /**
     * The contender of this {@code name} (one of {@link #NAMES}) on {@code client}, over {@code keys}.
     *
     * @throws IllegalArgumentException for an unknown name
     */
    public static RedisContender create(String name, RedissonClient client, String[] keys) {
        return create(name, client, keys, RATE, Duration.ofSeconds(1));
    }

    /** As {@link #create(String, RedissonClient, String[])}, with a limit of {@code count} per {@code period}. */
    public static RedisContender create(String name, RedissonClient client, String[] keys, long count,
                                        Duration period) {
        if (name.equals("sluice-lettuce")) {
            return new Sluice(Algorithm.TOKEN_BUCKET, null, keys, count, period);
        }
        if (name.startsWith("sluice-")) {
            return new Sluice(Algorithm.fromConfigName(name.substring("sluice-".length())), client, keys, count,
                    period);
        }
        switch (name) {
            case "floor":
                return new Floor(client, keys, count, period);
            case "bucket4j":
                return new Bucket4j(client, keys, false, count, period);
            case "bucket4j-batching":
                return new Bucket4j(client, keys, true, count, period);
            case "redisson":
                return new RedissonLimiter(client, keys, count, period);
            default:
                throw new IllegalArgumentException("contender must be one of " + String.join(", ", NAMES)
                        + ", got '" + name + "'");
        }
    }

    /**
     * Sluice's {@link RedisStore}: one EVALSHA of decide.lua per decision; or, without a Redisson
     * client ({@code sluice-lettuce}), its {@link LettuceStore} on a Lettuce client of its own,
     * to the same Redis: the same script and batching, the other client.
     */
    static final class Sluice extends RedisContender {
        private final RateLimiter limiter;
        private final Limit limit;
        private final RateLimitStore store;

        Sluice(Algorithm algorithm, RedissonClient client, String[] keys, long count, Duration period) {
            super(keys);
            long scale = algorithm == Algorithm.SLIDING_LOG ? Math.max(1, count / Limit.MAX_SLIDING_LOG_COUNT) : 1;
            // A sliding log keeps one entry per admitted unit and allows at most 100,000 per
            // period: 1,000,000/s becomes 100,000 per 100 ms, the same rate within its bound.
            this.limit = Limit.of("bench", count / scale, period.dividedBy(scale)).withAlgorithm(algorithm);
            // The 5 s timeout equals the client's response timeout: under 64 threads on 2 cores a
            // 100 ms default could turn slow answers into fast FAILED_OPEN decisions and flatter us.
            this.store = client != null ? RedisStore.of(client)
                    : LettuceStore.connect("lettuce:" + BenchRedis.get().url());
            this.limiter = RateLimiter.builder().limit(limit).store(store)
                    .timeout(Duration.ofSeconds(5)).build();
        }

        @Override
        public void close() {
            if (store instanceof LettuceStore) {
                store.close(); // its own client; a RedisStore's is the harness's
            }
        }

        @Override
        public boolean decide(int i) {
            Decision decision = limiter.decide(keys[i]);
            return decision.allowed();
        }

        @Override
        public CompletableFuture<Boolean> decideAsync(int i) {
            return limiter.decideAsync(keys[i]).toCompletableFuture().thenApply(Decision::allowed);
        }

        @Override
        public String redisKey(int i) {
            return LimitKeys.key(Keys.tag(keys[i]), limit);
        }

        @Override
        public long failures() {
            return limiter.storeFailures();
        }
    }

    /** The hand-written one-EVALSHA token bucket, {@link FloorTokenBucket}. */
    static final class Floor extends RedisContender {
        private final FloorTokenBucket bucket;
        private final String[] redisKeys;

        Floor(RedissonClient client, String[] keys, long count, Duration period) {
            super(keys);
            this.bucket = new FloorTokenBucket(client, count, period);
            this.redisKeys = new String[keys.length];
            for (int i = 0; i < keys.length; i++) {
                redisKeys[i] = "floor:" + keys[i];
            }
        }

        @Override
        public boolean decide(int i) {
            return bucket.tryAcquire(redisKeys[i]);
        }

        @Override
        public CompletableFuture<Boolean> decideAsync(int i) {
            return bucket.tryAcquireAsync(redisKeys[i]);
        }

        @Override
        public String redisKey(int i) {
            return redisKeys[i];
        }
    }

    /**
     * Bucket4j's Redisson proxy manager (compare-and-swap: GET the state, then a CAS script or
     * SET NX), optionally with its batching optimisation, which merges concurrent requests of one
     * JVM to one bucket into one CAS. Batching only works across threads that share a bucket
     * proxy, so proxies are built once per key and shared, as an application would cache them.
     */
    static final class Bucket4j extends RedisContender {
        private final BucketProxy[] proxies;
        private final AsyncBucketProxy[] asyncProxies;
        private final String[] redisKeys;

        Bucket4j(RedissonClient client, String[] keys, boolean batching, long count, Duration period) {
            super(keys);
            ProxyManager<String> manager = Bucket4jRedisson.casBasedBuilder(((Redisson) client).getCommandExecutor())
                    // Keys expire once the bucket would be full again, as Sluice's and the floor's do.
                    .expirationAfterWrite(
                            ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(1)))
                    .build();
            BucketConfiguration configuration = BucketConfiguration.builder()
                    .addLimit(limit -> limit.capacity(count).refillGreedy(count, period))
                    .build();
            proxies = new BucketProxy[keys.length];
            asyncProxies = new AsyncBucketProxy[keys.length];
            redisKeys = new String[keys.length];
            for (int i = 0; i < keys.length; i++) {
                redisKeys[i] = "b4j:" + keys[i];
                var builder = manager.builder();
                var asyncBuilder = manager.asAsync().builder();
                if (batching) {
                    builder = builder.withOptimization(Optimizations.batching());
                    asyncBuilder = asyncBuilder.withOptimization(Optimizations.batching());
                }
                proxies[i] = builder.build(redisKeys[i], configuration);
                asyncProxies[i] =
                        asyncBuilder.build(redisKeys[i], () -> CompletableFuture.completedFuture(configuration));
            }
        }

        @Override
        public boolean decide(int i) {
            return proxies[i].tryConsume(1);
        }

        @Override
        public CompletableFuture<Boolean> decideAsync(int i) {
            return asyncProxies[i].tryConsume(1);
        }

        @Override
        public String redisKey(int i) {
            return redisKeys[i];
        }
    }

    /**
     * Redisson's own {@code RRateLimiter} (its Lua script over a config hash, a value and a sorted
     * set of permits per limiter), one per key, {@code OVERALL}, with a keep-alive of one period so
     * its keys expire like the others'. Set up once per key before the measurement.
     */
    static final class RedissonLimiter extends RedisContender {
        private final RRateLimiter[] limiters;

        RedissonLimiter(RedissonClient client, String[] keys, long count, Duration period) {
            super(keys);
            limiters = new RRateLimiter[keys.length];
            List<CompletableFuture<Boolean>> set = new ArrayList<>();
            for (int i = 0; i < keys.length; i++) {
                limiters[i] = client.getRateLimiter("rrl:" + keys[i]);
                set.add(limiters[i].trySetRateAsync(RateType.OVERALL, count, period, period.multipliedBy(60))
                        .toCompletableFuture());
                if (set.size() == 256 || i == keys.length - 1) {
                    // a few hundred at a time: 100,000 at once exhaust the connection pool's wait
                    CompletableFuture.allOf(set.toArray(CompletableFuture[]::new)).join();
                    set.clear();
                }
            }
        }

        @Override
        public boolean decide(int i) {
            return limiters[i].tryAcquire();
        }

        @Override
        public CompletableFuture<Boolean> decideAsync(int i) {
            return limiters[i].tryAcquireAsync().toCompletableFuture();
        }

        @Override
        public String redisKey(int i) {
            return limiters[i].getName();
        }
    }
}
