package dev.sluice.benchmarks;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import io.github.bucket4j.Bucket;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One in-process decision: Sluice's {@link MemoryStore} (token bucket; through a {@code RateLimiter},
 * and alone) beside Bucket4j's local bucket (alone, and behind a {@code ConcurrentHashMap} of
 * buckets per caller, as users key it), Guava's {@code RateLimiter.tryAcquire()} and resilience4j's {@code RateLimiter}
 * ({@code acquirePermission()}, timeout zero), each on one limiter shared by all threads.
 *
 * <ul>
 *   <li>{@code allowed}: a limit so large it never runs out: the cost of admitting.</li>
 *   <li>{@code rejected}: a limit exhausted in set-up (1 per hour): the cost of saying no, which
 *       is what a limiter spends most under attack.</li>
 * </ul>
 *
 * Not like for like, and the table says so: Sluice looks the caller up in a bounded Caffeine map
 * and returns a full {@code Decision} (remaining, reset, retry-after) for a named caller; Bucket4j
 * returns a boolean from one bucket object (behind a map: after a {@code computeIfAbsent} lookup,
 * the fair peer of a per-caller store); Guava and resilience4j are single limiters with no
 * notion of a caller. Thread count (1, 2) is set by the launcher.
 */
@State(Scope.Benchmark)
@Fork(1)
@Warmup(iterations = 1, time = 2)
@Measurement(iterations = 3, time = 2)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class MemoryBenchmark {

    /** The names of the in-memory contenders, in the order tables show them. */
    public static final String[] NAMES = {"sluice-memory", "sluice-store", "bucket4j-map", "bucket4j-local", "guava",
        "resilience4j"};

    private static final long HUGE = 1_000_000_000L;

    @Param({"sluice-memory", "sluice-store", "bucket4j-map", "bucket4j-local", "guava", "resilience4j"})
    public String contender;

    @Param({"allowed", "rejected"})
    public String path;

    private BooleanSupplier decide;

    @Setup(Level.Trial)
    public void setUp() {
        boolean allowed = "allowed".equals(path);
        decide = create(contender, allowed);
        if (!allowed) {
            decide.getAsBoolean(); // spend the only permit; every measured call is a rejection
            if (decide.getAsBoolean()) {
                throw new IllegalStateException(contender + " still admits after its one permit");
            }
        }
    }

    static BooleanSupplier create(String contender, boolean allowed) {
        switch (contender) {
            case "sluice-memory": {
                Limit limit = allowed ? Limit.of("bench", HUGE, Duration.ofSeconds(1))
                        : Limit.of("bench", 1, Duration.ofHours(1));
                RateLimiter limiter = RateLimiter.builder().limit(limit).store(MemoryStore.create()).build();
                return () -> limiter.decide("caller").allowed();
            }
            case "sluice-store": {
                // The store alone, without the limiter around it (failure mode, timeout, listener):
                // shows where the time of sluice-memory goes.
                Limit limit = allowed ? Limit.of("bench", HUGE, Duration.ofSeconds(1))
                        : Limit.of("bench", 1, Duration.ofHours(1));
                List<Limit> limits = List.of(limit);
                MemoryStore store = MemoryStore.create();
                return () -> store.decide("caller", limits).toCompletableFuture().join().allowed();
            }
            case "bucket4j-map": {
                // The fair in-memory peer: users key Bucket4j per caller with a map of buckets.
                long capacity = allowed ? HUGE : 1;
                Duration period = allowed ? Duration.ofSeconds(1) : Duration.ofHours(1);
                ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
                Function<String, Bucket> create = key -> Bucket.builder()
                        .addLimit(l -> l.capacity(capacity).refillGreedy(capacity, period)).build();
                return () -> buckets.computeIfAbsent("caller", create).tryConsume(1);
            }
            case "bucket4j-local": {
                long capacity = allowed ? HUGE : 1;
                Duration period = allowed ? Duration.ofSeconds(1) : Duration.ofHours(1);
                Bucket bucket = Bucket.builder().addLimit(l -> l.capacity(capacity).refillGreedy(capacity, period))
                        .build();
                return () -> bucket.tryConsume(1);
            }
            case "guava": {
                // Guava has no burst beyond one second of permits: a rate of 1/3600 per second
                // after one acquisition rejects for an hour.
                com.google.common.util.concurrent.RateLimiter limiter =
                        com.google.common.util.concurrent.RateLimiter.create(allowed ? HUGE : 1.0 / 3600);
                return limiter::tryAcquire;
            }
            case "resilience4j": {
                RateLimiterConfig config = RateLimiterConfig.custom()
                        .limitForPeriod(allowed ? Integer.MAX_VALUE : 1)
                        .limitRefreshPeriod(allowed ? Duration.ofSeconds(1) : Duration.ofHours(1))
                        .timeoutDuration(Duration.ZERO)
                        .build();
                io.github.resilience4j.ratelimiter.RateLimiter limiter =
                        io.github.resilience4j.ratelimiter.RateLimiter.of("bench", config);
                return limiter::acquirePermission;
            }
            default:
                throw new IllegalArgumentException("contender must be one of " + String.join(", ", NAMES)
                        + ", got '" + contender + "'");
        }
    }

    @Benchmark
    @BenchmarkMode({Mode.Throughput, Mode.SampleTime})
    public boolean decide() {
        return decide.getAsBoolean();
    }
}
