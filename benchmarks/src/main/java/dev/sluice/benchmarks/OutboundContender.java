package dev.sluice.benchmarks;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.redis.RedisStore;
import io.github.bucket4j.BlockingStrategy;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.BucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.redisson.Bucket4jRedisson;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * One way of waiting for a permit of a shared, Redis-backed rate ("call the provider at most
 * {@code rate} per second across every instance"), over a fixed array of keys: Sluice's
 * {@link Permits} (sync and async) on {@code RedisStore}, Bucket4j's blocking API on its Redisson
 * proxy manager, and Redisson's own {@code RRateLimiter}. Every contender gets the same rate and
 * the same small burst ({@link OutboundBenchmark#BURST}), waits at most
 * {@link OutboundBenchmark#MAX_WAIT}, and runs on one Redisson client configuration
 * ({@link BenchRedis#newClient()}).
 */
abstract class OutboundContender implements AutoCloseable {

    /** Returned by {@link #acquire} when the contender promises no start time of its own. */
    static final long NO_PROMISE = -1;

    /** The names accepted by {@link #create}, in the order tables show them. */
    static final String[] NAMES = {
        "sluice-token-bucket", "sluice-gcra", "sluice-token-bucket-async", "bucket4j", "redisson",
        "redisson-per-second",
    };

    final String[] keys;

    OutboundContender(String[] keys) {
        this.keys = keys;
    }

    /**
     * Waits for one permit of {@code keys[i]}.
     *
     * @return the wait the contender promised when it granted, in nanoseconds, or {@link #NO_PROMISE}
     * @throws Refused if no permit came within the longest wait
     */
    abstract long acquire(int i) throws InterruptedException;

    /** As {@link #acquire} without blocking a thread, for the contenders that can ({@link #async()}). */
    CompletableFuture<Long> acquireAsync(int i) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no async form here");
    }

    /** Whether the driver calls {@link #acquireAsync} instead of {@link #acquire}. */
    boolean async() {
        return false;
    }

    /** Store failures the contender answered without Redis (a failed-open grant would flatter it). */
    long failures() {
        return 0;
    }

    @Override
    public void close() {
    }

    /** No permit came within the longest wait: counted, not a grant. */
    static final class Refused extends RuntimeException {
        Refused(String what) {
            super(what, null, false, false);
        }
    }

    /**
     * {@code name} over {@code keys}, each key at {@code ratePerKey} per second with a burst of
     * {@link OutboundBenchmark#BURST}.
     */
    static OutboundContender create(String name, RedissonClient client, String[] keys, long ratePerKey) {
        return switch (name) {
            case "sluice-token-bucket" -> new Sluice(client, keys, ratePerKey, Algorithm.TOKEN_BUCKET, false);
            case "sluice-gcra" -> new Sluice(client, keys, ratePerKey, Algorithm.GCRA, false);
            case "sluice-token-bucket-async" -> new Sluice(client, keys, ratePerKey, Algorithm.TOKEN_BUCKET, true);
            case "bucket4j" -> new Bucket4j(client, keys, ratePerKey);
            case "redisson" -> new RedissonLimiter(client, keys, OutboundBenchmark.BURST,
                    OutboundBenchmark.burstPeriod(ratePerKey));
            case "redisson-per-second" -> new RedissonLimiter(client, keys, ratePerKey, Duration.ofSeconds(1));
            default -> throw new IllegalArgumentException("unknown outbound contender '" + name + "'; one of "
                    + String.join(", ", NAMES));
        };
    }

    /**
     * {@link Permits} over a {@link RateLimiter} on {@code RedisStore}: one {@code EVALSHA} of
     * {@code decide.lua}'s reservation form per acquire, then a sleep (sync) or a timer (async)
     * until the reserved slot. Its promise is the decision's {@link Decision#retryAfter()}.
     */
    static final class Sluice extends OutboundContender {
        private final RateLimiter limiter;
        private final Permits permits;
        private final boolean async;

        Sluice(RedissonClient client, String[] keys, long ratePerKey, Algorithm algorithm, boolean async) {
            super(keys);
            Limit limit = Limit.of("outbound", ratePerKey, Duration.ofSeconds(1))
                    .withBurst(OutboundBenchmark.BURST).withAlgorithm(algorithm);
            // 5 s, the client's response timeout: on a loaded machine a 100 ms default would turn
            // slow answers into fail-open grants, which would look punctual and over-admit.
            this.limiter = RateLimiter.builder().limit(limit).store(RedisStore.of(client))
                    .timeout(Duration.ofSeconds(5)).build();
            this.permits = Permits.of(limiter, OutboundBenchmark.MAX_WAIT);
            this.async = async;
        }

        @Override
        long acquire(int i) throws InterruptedException {
            try {
                return permits.acquire(keys[i]).retryAfter().toNanos();
            } catch (PermitUnavailableException e) {
                throw new Refused(e.getMessage());
            }
        }

        @Override
        CompletableFuture<Long> acquireAsync(int i) {
            return permits.acquireAsync(keys[i]).handle((decision, failure) -> {
                if (failure == null) {
                    return decision.retryAfter().toNanos();
                }
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                if (cause instanceof PermitUnavailableException) {
                    throw new Refused(cause.getMessage());
                }
                throw new CompletionException(cause);
            });
        }

        @Override
        boolean async() {
            return async;
        }

        @Override
        long failures() {
            return limiter.storeFailures();
        }
    }

    /**
     * Bucket4j's blocking API on its Redisson proxy manager (compare-and-swap):
     * {@code asBlocking().tryConsume(1, maxWait, PARKING)}, which reserves the tokens in the
     * bucket (one CAS, retried on conflict) and parks until they are due. Bucket proxies are built
     * once per key and shared by the threads, as an application would cache them.
     */
    static final class Bucket4j extends OutboundContender {
        private final BucketProxy[] proxies;

        Bucket4j(RedissonClient client, String[] keys, long ratePerKey) {
            super(keys);
            ProxyManager<String> manager = Bucket4jRedisson.casBasedBuilder(((Redisson) client).getCommandExecutor())
                    .expirationAfterWrite(
                            ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
                    .build();
            // BURST tokens every BURST/rate: the same rate and burst as the others.
            BucketConfiguration configuration = BucketConfiguration.builder()
                    .addLimit(limit -> limit.capacity(OutboundBenchmark.BURST)
                            .refillGreedy(OutboundBenchmark.BURST, OutboundBenchmark.burstPeriod(ratePerKey)))
                    .build();
            proxies = new BucketProxy[keys.length];
            for (int i = 0; i < keys.length; i++) {
                proxies[i] = manager.builder().build("b4j-out:" + keys[i], () -> configuration);
            }
        }

        @Override
        long acquire(int i) throws InterruptedException {
            if (!proxies[i].asBlocking().tryConsume(1, OutboundBenchmark.MAX_WAIT, BlockingStrategy.PARKING)) {
                throw new Refused("bucket4j: no token within " + OutboundBenchmark.MAX_WAIT);
            }
            return NO_PROMISE;
        }
    }

    /**
     * Redisson's {@code RRateLimiter}, {@code OVERALL}: {@code redisson} at
     * {@value OutboundBenchmark#BURST} permits per {@code BURST/rate}, the others' burst (its rate
     * is a sliding window of permits); {@code redisson-per-second} at the whole second's permits
     * per second, as a user would write it, which allows that second's permits at once.
     * {@code tryAcquire(1, maxWait)} is {@code acquire()}'s code with a deadline: its script
     * answers how long until a permit frees up, and the client sleeps that long and asks again.
     */
    static final class RedissonLimiter extends OutboundContender {
        private final RRateLimiter[] limiters;

        RedissonLimiter(RedissonClient client, String[] keys, long permits, Duration interval) {
            super(keys);
            limiters = new RRateLimiter[keys.length];
            for (int i = 0; i < keys.length; i++) {
                limiters[i] = client.getRateLimiter("rrl-out:" + keys[i]);
                limiters[i].trySetRate(RateType.OVERALL, permits, interval, Duration.ofMinutes(1));
            }
        }

        @Override
        long acquire(int i) {
            if (!limiters[i].tryAcquire(1, OutboundBenchmark.MAX_WAIT)) {
                throw new Refused("redisson: no permit within " + OutboundBenchmark.MAX_WAIT);
            }
            return NO_PROMISE;
        }
    }
}
