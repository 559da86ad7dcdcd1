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
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/** The in-memory store's own promises: bounded memory, and time that may jump. */
class MemoryStoreTest {

    @Test
    void aFloodOfDistinctCallersKeepsTheEntryCountAtItsMaximum() {
        MemoryStore store = MemoryStore.builder().maximumCallers(10_000).build();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("flood", "10/1h")).store(store).build();
        Runtime runtime = Runtime.getRuntime();
        System.gc();
        long before = runtime.totalMemory() - runtime.freeMemory();
        for (int i = 0; i < 1_000_000; i++) {
            assertThat(limiter.decide("flood-" + i).allowed()).isTrue();
            if (i % 100_000 == 0) {
                assertThat(store.callerCount()).isLessThanOrEqualTo(10_000);
            }
        }
        assertThat(store.callerCount()).isLessThanOrEqualTo(10_000);
        System.gc();
        long grown = runtime.totalMemory() - runtime.freeMemory() - before;
        // 10,000 callers of a few hundred bytes each; a million would be hundreds of MB
        assertThat(grown).as("heap growth in bytes").isLessThan(64L * 1024 * 1024);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Algorithm.class, names = "CONCURRENCY", mode = EnumSource.Mode.EXCLUDE)
    void aClockGoingBackwardsGrantsNothingExtra(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("back", "4/1m").withAlgorithm(algorithm))
                .store(MemoryStore.builder().timeSource(clock).build()).build();
        clock.advance(Duration.ofSeconds(30));
        for (int i = 0; i < 4; i++) {
            assertThat(limiter.decide("c").allowed()).isTrue();
        }
        for (long back : new long[] {1, 30, 3_600, 86_400}) {
            clock.advance(Duration.ofSeconds(-back));
            Decision decision = limiter.decide("c");
            assertThat(decision.allowed()).as("%s s back", back).isFalse();
            assertThat(decision.remaining()).isZero();
            clock.advance(Duration.ofSeconds(back));
        }
    }

    @Test
    void extremeTimesDoNotOverflow() {
        for (Algorithm algorithm : Algorithm.rates()) {
            ManualClock clock = new ManualClock(0);
            RateLimiter limiter = RateLimiter.builder().limit(Limit.of("far", "1000/1d").withAlgorithm(algorithm))
                    .store(MemoryStore.builder().timeSource(clock).build()).build();
            assertThat(limiter.decide("c").remaining()).isEqualTo(999);
            clock.set(ManualClock.ALIGNED_START * 4); // year 2223, after two centuries idle
            Decision decision = limiter.decide("c");
            assertThat(decision.allowed()).isTrue();
            assertThat(decision.remaining()).as(algorithm.configName()).isEqualTo(999);
        }
    }

    @Test
    void aCallerEvictedBetweenItsReadAndItsLockIsDecidedOnTheCallerTheCacheHolds() {
        for (int r = 0; r < 100; r++) {
            int round = r;
            MemoryStore store = MemoryStore.builder().maximumCallers(1).build();
            RateLimiter limiter = RateLimiter.builder().limit(Limit.of("once", "1/1h")).store(store).build();
            String hot = "hot-" + round;
            AtomicBoolean armed = new AtomicBoolean(true);
            store.beforeLock = tag -> {
                if (armed.getAndSet(false)) {
                    // while this request holds the caller it read, others evict it ...
                    for (int i = 0; i < 10_000 && store.holds(hot); i++) {
                        limiter.decide("other-" + round);
                    }
                    assertThat(store.holds(hot)).as("round %d: evicted", round).isFalse();
                    // ... and the caller's next request spends its one unit on a new entry
                    assertThat(limiter.decide(hot).allowed()).as("round %d: the second request", round).isTrue();
                }
            };
            Decision raced = limiter.decide(hot);
            assertThat(raced.allowed()).as("round %d: the first request, decided on the evicted caller", round)
                    .isFalse();
            assertThat(raced.remaining()).isZero();
        }
    }
}
