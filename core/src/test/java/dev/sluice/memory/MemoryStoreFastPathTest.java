package dev.sluice.memory;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.ManualClock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The memory store's lock-free paths: a caller whose state says no is refused without taking its
 * lock, and an admission decided from an optimistic read commits only if nothing changed since.
 */
class MemoryStoreFastPathTest {

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void aRefusalTakesNoLockAndMatchesTheLockedAnswer(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        MemoryStore store = MemoryStore.builder().timeSource(clock).build();
        Limit limit = Limit.of("fast", "3/1m").withAlgorithm(algorithm);
        RateLimiter limiter = RateLimiter.builder().limit(limit).store(store).build();
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.decide("c").allowed()).isTrue();
        }
        AtomicInteger locked = new AtomicInteger();
        store.beforeLock = tag -> locked.incrementAndGet();
        List<Decision> fast = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            clock.advance(Duration.ofMillis(7));
            fast.add(limiter.decide("c"));
        }
        assertThat(locked).as("refusals that went to the caller's lock").hasValue(0);
        assertThat(fast).allMatch(d -> d.outcome() == Decision.Outcome.REJECTED);

        // The same trace through the locked path of another store (its limits never match the
        // caller's cached list, so every decision takes the lock) gives the same decisions.
        ManualClock again = new ManualClock();
        MemoryStore other = MemoryStore.builder().timeSource(again).build();
        for (int i = 0; i < 3; i++) {
            other.decide("c", List.of(limit)).toCompletableFuture().join();
        }
        for (int i = 0; i < 50; i++) {
            again.advance(Duration.ofMillis(7));
            assertThat(other.decide("c", List.copyOf(List.of(limit))).toCompletableFuture().join())
                    .as("refusal %d", i).isEqualTo(fast.get(i));
        }
    }

    @Test
    void anAdmissionWithoutTheLockStillKeepsTheCallerAsLongAsItsStateNeeds() {
        ManualClock clock = new ManualClock();
        MemoryStore store = MemoryStore.builder().timeSource(clock).build();
        List<Limit> limits = List.of(Limit.of("keep", 60, Duration.ofHours(1)));
        for (int i = 0; i < 60; i++) {
            assertThat(store.decide("c", limits).toCompletableFuture().join().allowed()).isTrue();
        }
        clock.advance(Duration.ofMinutes(59));
        // the bucket, spent again on the lock-free path an hour after the caller's entry was made
        for (int i = 0; i < 59; i++) {
            assertThat(store.decide("c", limits).toCompletableFuture().join().allowed()).isTrue();
        }
        clock.advance(Duration.ofMinutes(31));
        assertThat(store.decide("c", limits).toCompletableFuture().join().remaining())
                .as("31 tokens back, one spent: the caller was not forgotten with its full bucket").isEqualTo(30);
    }

    @Test
    void concurrentAdmissionsFromOptimisticReadsAreExact() throws Exception {
        for (int round = 0; round < 20; round++) {
            MemoryStore store = MemoryStore.create();
            RateLimiter limiter = RateLimiter.builder().limit(Limit.of("exact", 500, Duration.ofDays(366)))
                    .limit(Limit.of("exact-2", 800, Duration.ofDays(366)).withAlgorithm(Algorithm.GCRA)).store(store)
                    .build();
            String caller = "exact-" + round;
            limiter.decide(caller); // the first decision creates the state under the lock
            ConcurrentLinkedQueue<Long> remainders = new ConcurrentLinkedQueue<>();
            int threads = 4;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch go = new CountDownLatch(1);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    done.add(pool.submit(() -> {
                        go.await();
                        for (int i = 0; i < 250; i++) {
                            Decision decision = limiter.decide(caller);
                            if (decision.allowed()) {
                                remainders.add(decision.quotas().get(0).remaining());
                            }
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> future : done) {
                    future.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(remainders).as("round %d: each admission saw its own place in line", round)
                    .containsExactlyInAnyOrderElementsOf(LongStream.range(0, 499).boxed().toList());
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void aRefundTakesTheWriteLockAndTheNextLockFreeDecisionSeesIt(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        MemoryStore store = MemoryStore.builder().timeSource(clock).build();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("refund", "3/1h").withAlgorithm(algorithm))
                .store(store).build();
        for (int i = 0; i < 3; i++) {
            assertThat(limiter.decide("c").allowed()).isTrue();
        }
        AtomicInteger locked = new AtomicInteger();
        store.beforeLock = tag -> locked.incrementAndGet();
        assertThat(limiter.decide("c").allowed()).as("spent, refused lock-free").isFalse();
        assertThat(limiter.refund("c")).isTrue();
        Decision after = limiter.decide("c");
        assertThat(after.allowed()).as(algorithm + ": the refunded unit, admitted lock-free").isTrue();
        assertThat(after.remaining()).isZero();
        assertThat(limiter.decide("c").allowed()).isFalse();
        assertThat(locked).as("decisions that went to the caller's lock").hasValue(0);
    }

    @Test
    void concurrentRefundsAndOptimisticAdmissionsLoseNoUpdate() throws Exception {
        for (int round = 0; round < 10; round++) {
            MemoryStore store = MemoryStore.create();
            RateLimiter limiter = RateLimiter.builder().limit(Limit.of("give", 3, Duration.ofDays(366)))
                    .limit(Limit.of("give-2", 5, Duration.ofDays(366)).withAlgorithm(Algorithm.GCRA)).store(store)
                    .build();
            String caller = "give-" + round;
            limiter.decide(caller); // the first decision creates the state under the lock
            limiter.refund(caller);
            int threads = 4;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch go = new CountDownLatch(1);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    done.add(pool.submit(() -> {
                        go.await();
                        for (int i = 0; i < 500; i++) {
                            if (limiter.decide(caller).allowed()) {
                                limiter.refund(caller); // every admission is given back
                            }
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> future : done) {
                    future.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
            Decision last = limiter.decide(caller);
            assertThat(last.quotas().get(0).remaining())
                    .as("round %d: every refund counted, every admission too", round)
                    .isEqualTo(2);
            assertThat(last.quotas().get(1).remaining()).isEqualTo(4);
        }
    }
}
