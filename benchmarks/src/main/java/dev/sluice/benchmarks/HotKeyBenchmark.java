package dev.sluice.benchmarks;

import dev.sluice.Decision;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.redis.RedisStore;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Hot keys, before and after slices, in one run: decisions a second of one hot key decided async
 * on one client (Sluice with slices off, Sluice with them, Bucket4j with batching), and of one
 * {@code key=global} cap shared by three clients, each with its own store and threads (slices off,
 * on). Each figure is the best of three windows after a warm-up. Prints a Markdown table.
 *
 * <pre>{@code
 * java -cp benchmarks/target/benchmarks.jar dev.sluice.benchmarks.HotKeyBenchmark [seconds-per-window]
 * }</pre>
 *
 * <p>The limits admit every decision (1,000,000 a second), so that the allowed path is measured;
 * the global cap's run also reports what was admitted against what the bucket allowed over the run
 * (its capacity and refill), which it never exceeds (asserted exactly in HotKeySlicesTest).
 */
public final class HotKeyBenchmark {

    private static final int ASYNC_THREADS = 4;
    private static final int IN_FLIGHT = 64;
    private static final int GLOBAL_THREADS = 8;
    private static final int CLIENTS = 3;
    private static final long RATE = 1_000_000;

    private HotKeyBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        BenchRedis redis = BenchRedis.get();
        List<String> rows = new ArrayList<>();
        double asyncOff;
        double asyncOn;
        double bucket4j;
        RedissonClient client = redis.newClient();
        try {
            asyncOff = hotAsync(sluice(client, 0, "hot-off"), seconds);
            asyncOn = hotAsync(sluice(client, -1, "hot-on"), seconds);
            RedisContender b4j = RedisContender.create("bucket4j-batching", client, new String[] {"hot-b4j"});
            bucket4j = hotAsync(i -> b4j.decideAsync(0), seconds);
        } finally {
            client.shutdown();
        }
        rows.add(row("hot key, async, " + ASYNC_THREADS + " threads x " + IN_FLIGHT + " in flight", asyncOff, asyncOn,
                String.format("%.2fx Bucket4j batching (%,.0f/s)", asyncOn / bucket4j, bucket4j)));
        Global off = global(redis, 0, seconds);
        Global on = global(redis, -1, seconds);
        rows.add(row("key=global, " + CLIENTS + " clients x " + GLOBAL_THREADS + " threads, sync",
                off.perSecond, on.perSecond,
                String.format("admitted %,d of at most %,d (slices on)", on.admitted, on.bound)));
        System.out.println("| case | slices off (decisions/s) | slices on (decisions/s) | on / off | note |");
        System.out.println("|---|---:|---:|---:|---|");
        rows.forEach(System.out::println);
        System.out.println();
        System.out.println("Machine shared with other work: compare the ratios, not the absolute figures.");
    }

    private static String row(String name, double off, double on, String note) {
        return String.format("| %s | %,.0f | %,.0f | %.2f | %s |", name, off, on, on / off, note);
    }

    /** One decision without blocking. */
    private interface AsyncDecider {
        CompletableFuture<Boolean> decide(int i);
    }

    /** A Sluice limiter on its own store; {@code threshold} -1 leaves slices at their default. */
    private static AsyncDecider sluice(RedissonClient client, int threshold, String key) {
        RedisStore.Builder store = RedisStore.builder().client(client);
        if (threshold >= 0) {
            store.hotKeyThreshold(threshold);
        }
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("bench-hot", RATE, Duration.ofSeconds(1)))
                .store(store.build()).failureMode(FailureMode.CLOSED).timeout(Duration.ofSeconds(5)).build();
        return i -> limiter.decideAsync(key).toCompletableFuture().thenApply(Decision::allowed);
    }

    /** Decisions a second of one key, {@link #IN_FLIGHT} at a time per thread: best of three windows after one. */
    private static double hotAsync(AsyncDecider decider, double seconds) throws InterruptedException {
        LongAdder done = new LongAdder();
        AtomicLong failed = new AtomicLong();
        long end = System.nanoTime() + (long) (seconds * 4 * 1e9);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < ASYNC_THREADS; t++) {
            Thread thread = new Thread(() -> {
                while (System.nanoTime() < end) {
                    CompletableFuture<?>[] batch = new CompletableFuture<?>[IN_FLIGHT];
                    for (int i = 0; i < IN_FLIGHT; i++) {
                        batch[i] = decider.decide(i).whenComplete((allowed, e) -> {
                            if (e != null || !allowed) {
                                failed.incrementAndGet();
                            }
                        });
                    }
                    CompletableFuture.allOf(batch).exceptionally(e -> null).join();
                    done.add(IN_FLIGHT);
                }
            });
            thread.start();
            threads.add(thread);
        }
        double best = windows(done, seconds);
        for (Thread thread : threads) {
            thread.join();
        }
        if (failed.get() > 0) {
            System.err.println("warning: " + failed.get() + " decisions failed or were refused");
        }
        return best;
    }

    /** The best of three windows of {@code seconds}, after a first one of warm-up. */
    private static double windows(LongAdder done, double seconds) throws InterruptedException {
        Thread.sleep((long) (seconds * 1000));
        double best = 0;
        for (int w = 0; w < 3; w++) {
            long before = done.sum();
            long started = System.nanoTime();
            Thread.sleep((long) (seconds * 1000) - 50);
            double rate = (done.sum() - before) * 1e9 / (System.nanoTime() - started);
            best = Math.max(best, rate);
        }
        return best;
    }

    private record Global(double perSecond, long admitted, long bound) {
    }

    /** One global cap, three clients each with its own store and threads deciding it, blocking. */
    private static Global global(BenchRedis redis, int threshold, double seconds) throws InterruptedException {
        String caller = "global~" + System.nanoTime();
        Limit limit = Limit.of("bench-global", RATE, Duration.ofSeconds(1));
        List<RedissonClient> clients = new ArrayList<>();
        List<RateLimiter> limiters = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            RedissonClient client = redis.newClient();
            clients.add(client);
            RedisStore.Builder store = RedisStore.builder().client(client);
            if (threshold >= 0) {
                store.hotKeyThreshold(threshold);
            }
            limiters.add(RateLimiter.builder().limit(limit).store(store.build()).failureMode(FailureMode.CLOSED)
                    .timeout(Duration.ofSeconds(5)).build());
        }
        LongAdder done = new LongAdder();
        LongAdder admitted = new LongAdder();
        long started = System.nanoTime();
        long end = started + (long) (seconds * 4 * 1e9);
        List<Thread> threads = new ArrayList<>();
        for (RateLimiter limiter : limiters) {
            for (int t = 0; t < GLOBAL_THREADS; t++) {
                Thread thread = new Thread(() -> {
                    while (System.nanoTime() < end) {
                        if (limiter.decide(caller).allowed()) {
                            admitted.increment();
                        }
                        done.increment();
                    }
                });
                thread.start();
                threads.add(thread);
            }
        }
        double best = windows(done, seconds);
        for (Thread thread : threads) {
            thread.join();
        }
        long elapsedMicros = (System.nanoTime() - started) / 1_000;
        clients.forEach(RedissonClient::shutdown);
        return new Global(best, admitted.sum(), RATE + elapsedMicros * RATE / 1_000_000);
    }
}
