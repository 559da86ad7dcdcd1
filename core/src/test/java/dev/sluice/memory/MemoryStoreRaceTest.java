package dev.sluice.memory;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The memory store's paths without a lock (refusals from an optimistic read, admissions that
 * commit only if nothing changed), its clock read once per decision and its own dropping of idle
 * callers: threads racing on one caller never get more than the limit, on every algorithm, and a
 * caller is dropped only once every state of it has expired.
 */
class MemoryStoreRaceTest {

    private static final int LIMIT = 40;
    private static final int THREADS = 4;
    private static final int ATTEMPTS = 30;

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void threadsRacingForOneCallersLimitAdmitExactlyTheLimit(Algorithm algorithm) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            for (int round = 0; round < 30; round++) {
                MemoryStore store = MemoryStore.create();
                RateLimiter limiter = RateLimiter.builder().limit(Limit.of("race", LIMIT, Duration.ofDays(366))
                        .withAlgorithm(algorithm)).store(store).build();
                String caller = "race-" + round;
                // every other round the caller exists before the race: the lock-free paths from the
                // start; else the race also creates it
                int before = round % 2 == 0 ? 1 : 0;
                if (before == 1) {
                    assertThat(limiter.decide(caller).allowed()).isTrue();
                }
                AtomicInteger admitted = new AtomicInteger();
                CountDownLatch go = new CountDownLatch(1);
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    done.add(pool.submit(() -> {
                        go.await();
                        for (int i = 0; i < ATTEMPTS; i++) {
                            Decision decision = limiter.decide(caller);
                            assertThat(decision.outcome()).isIn(Decision.Outcome.ALLOWED, Decision.Outcome.REJECTED);
                            if (decision.allowed()) {
                                admitted.incrementAndGet();
                            }
                        }
                        return null;
                    }));
                }
                go.countDown();
                for (Future<?> future : done) {
                    future.get(60, TimeUnit.SECONDS);
                }
                assertThat(admitted.get() + before)
                        .as("round %d: admissions of %d racing attempts", round, THREADS * ATTEMPTS)
                        .isEqualTo(LIMIT);
                Decision after = limiter.decide(caller);
                assertThat(after.allowed()).isFalse();
                assertThat(after.remaining()).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void callersWhoseStatesHaveAllExpiredAreDroppedAsNewCallersCome() {
        ManualClock clock = new ManualClock();
        MemoryStore store = MemoryStore.builder().timeSource(clock).build();
        RateLimiter minute = RateLimiter.builder().limit(Limit.of("minute", "10/1m")).store(store).build();
        RateLimiter hour = RateLimiter.builder().limit(Limit.of("hour", "10/1h")).store(store).build();
        for (int i = 0; i < 100; i++) {
            assertThat(minute.decide("idle-" + i).allowed()).isTrue();
        }
        for (int i = 0; i < 5; i++) {
            assertThat(hour.decide("kept").allowed()).isTrue();
        }
        clock.advance(Duration.ofMinutes(2)); // the minute's buckets are whole again; the hour's not
        for (int i = 0; i < 200; i++) {
            assertThat(minute.decide("new-" + i).allowed()).isTrue();
        }
        for (int i = 0; i < 100; i++) {
            assertThat(store.holds("idle-" + i)).as("idle-%d, whose state had expired", i).isFalse();
        }
        assertThat(store.holds("kept")).as("a caller whose state still counts").isTrue();
        assertThat(hour.decide("kept").remaining()).as("its budget as it was: 5 spent, 2 minutes refilled 0.33")
                .isEqualTo(4);
    }
}
