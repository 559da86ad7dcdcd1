package dev.sluice.memory;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Decisions on the lock-free path racing the memory store's other writers on one caller
 * (reservations, refunds, pauses, all under the caller's lock): every unit is counted once, and
 * nothing is admitted once a pause is confirmed.
 */
class MemoryStoreMixedRaceTest {

    private static final int LIMIT = 60;
    private static final int ATTEMPTS = 40;

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void decisionsReservationsAndRefundsOnOneCallerCountEveryUnitOnce(Algorithm algorithm) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int round = 0; round < 20; round++) {
                MemoryStore store = MemoryStore.create();
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("mixed", LIMIT, Duration.ofDays(366))
                        .withAlgorithm(algorithm)).store(store).build();
                List<Limit> limits = limiter.limits();
                String caller = "mixed-" + round;
                // the caller exists: lock-free paths from the start
                assertThat(limiter.decide(caller).allowed()).isTrue();
                AtomicInteger kept = new AtomicInteger(1);
                AtomicInteger givenBack = new AtomicInteger();
                CountDownLatch go = new CountDownLatch(1);
                List<Callable<Void>> tasks = new ArrayList<>();
                for (int t = 0; t < 2; t++) {
                    tasks.add(() -> {
                        go.await();
                        for (int i = 0; i < ATTEMPTS; i++) {
                            if (limiter.decide(caller).allowed()) {
                                kept.incrementAndGet();
                            }
                        }
                        return null;
                    });
                }
                tasks.add(() -> {
                    go.await();
                    for (int i = 0; i < ATTEMPTS; i++) {
                        Decision reserved = store.reserve(caller, limits, Duration.ZERO).toCompletableFuture().join();
                        if (reserved.outcome() == Decision.Outcome.ALLOWED) {
                            assertThat(reserved.retryAfter()).isZero();
                            kept.incrementAndGet();
                        }
                    }
                    return null;
                });
                tasks.add(() -> {
                    go.await();
                    for (int i = 0; i < ATTEMPTS; i++) {
                        if (limiter.decide(caller).allowed()) {
                            store.refund(caller, limits).toCompletableFuture().join(); // given back at once
                            givenBack.incrementAndGet();
                        }
                    }
                    return null;
                });
                List<Future<Void>> done = new ArrayList<>();
                for (Callable<Void> task : tasks) {
                    done.add(pool.submit(task));
                }
                go.countDown();
                for (Future<Void> future : done) {
                    future.get(60, TimeUnit.SECONDS);
                }
                int left = 0;
                while (limiter.decide(caller).allowed()) {
                    left++;
                }
                assertThat(kept.get() + left).as("round %d: units kept by admissions and reservations (%d refunded), "
                        + "plus those left", round, givenBack.get()).isEqualTo(LIMIT);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void nothingIsAdmittedOnceAPauseIsConfirmed(Algorithm algorithm) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            for (int round = 0; round < 10; round++) {
                MemoryStore store = MemoryStore.create();
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("paused", 50_000, Duration.ofHours(1))
                        .withAlgorithm(algorithm)).store(store).build();
                String caller = "paused-" + round;
                assertThat(limiter.decide(caller).allowed()).isTrue();
                AtomicLong confirmed = new AtomicLong(Long.MAX_VALUE);
                AtomicInteger late = new AtomicInteger();
                AtomicInteger after = new AtomicInteger();
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < 3; t++) {
                    done.add(pool.submit(() -> {
                        go.await();
                        for (int i = 0; i < 2_000; i++) {
                            long started = System.nanoTime();
                            boolean allowed = limiter.decide(caller).allowed();
                            if (started - confirmed.get() > 0) {
                                after.incrementAndGet();
                                if (allowed) {
                                    late.incrementAndGet();
                                }
                            }
                        }
                        return null;
                    }));
                }
                go.countDown();
                Thread.sleep(1);
                assertThat(limiter.pause(caller, Duration.ofHours(1))).isTrue();
                confirmed.set(System.nanoTime());
                for (Future<?> future : done) {
                    future.get(60, TimeUnit.SECONDS);
                }
                assertThat(late)
                        .as("round %d: admissions begun after the pause was confirmed, of %d", round, after.get())
                        .hasValue(0);
                assertThat(limiter.decide(caller).allowed()).isFalse();
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
