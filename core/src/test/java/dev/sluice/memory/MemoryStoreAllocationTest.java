package dev.sluice.memory;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.testing.ManualClock;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one decision on the memory store allocates, measured on this thread
 * ({@code com.sun.management.ThreadMXBean}): an admission of a caller under its rate reuses the
 * decision it got last time, and any other decision under one limit costs no more than the decision
 * it returns.
 */
class MemoryStoreAllocationTest {

    private static final int ROUNDS = 50_000;
    /** Decisions before measuring: enough for the JIT's optimised code, whose allocations are the ones that last. */
    private static final int WARM = 300_000;
    /** What the counter's granularity and an occasional stray allocation may add per decision. */
    private static final int SLACK = 8;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    /** Keeps every decision reachable, so that none is optimised away. */
    private static volatile Object sink;

    @Test
    void anAdmissionOfACallerWhoseBucketIsWholeAgainAllocatesNothing() {
        ManualClock clock = new ManualClock();
        Limit limit = Limit.of("steady", "10/1s");
        RateLimiter limiter = RateLimiter.builder().limit(limit)
                .store(MemoryStore.builder().timeSource(clock).build()).build();
        // Each admission comes after the bucket is whole again (its state has expired) and leaves
        // the same numbers: 9 left, 100 ms to refill the token it spent.
        admit(limiter, clock, WARM);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        admit(limiter, clock, ROUNDS);
        long perAdmission = (THREADS.getCurrentThreadAllocatedBytes() - before) / ROUNDS;
        assertThat(perAdmission).as("bytes per admission").isLessThanOrEqualTo(SLACK);
        Decision decision = limiter.decide("c");
        assertThat(decision.quotas()).singleElement().isEqualTo(new Decision.Quota(limit, true, 8,
                Duration.ofMillis(200), Duration.ZERO, Duration.ofMillis(100)));
    }

    @Test
    void anAdmissionThatDrainsTheBucketAllocatesOnlyItsDecisionListQuotaAndReset() {
        ManualClock clock = new ManualClock();
        Limit limit = Limit.of("draining", 1_000_000, Duration.ofHours(1));
        RateLimiter limiter = RateLimiter.builder().limit(limit)
                .store(MemoryStore.builder().timeSource(clock).build()).build();
        // The clock stands still: every admission leaves one token less and a longer reset.
        drain(limiter, WARM);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        drain(limiter, ROUNDS);
        long perAdmission = (THREADS.getCurrentThreadAllocatedBytes() - before) / ROUNDS;

        Duration next = Duration.ofNanos(1);
        build(limit, next, WARM);
        before = THREADS.getCurrentThreadAllocatedBytes();
        build(limit, next, ROUNDS);
        long built = (THREADS.getCurrentThreadAllocatedBytes() - before) / ROUNDS;
        assertThat(perAdmission)
                .as("bytes per admission; a decision, its list, its quota and a reset take %d", built)
                .isLessThanOrEqualTo(built + SLACK);
    }

    @Test
    void aRefusalUnderOneLimitAllocatesOnlyItsDecisionListQuotaAndWait() {
        ManualClock clock = new ManualClock();
        Limit limit = Limit.of("spent", "1/1h");
        RateLimiter limiter = RateLimiter.builder().limit(limit)
                .store(MemoryStore.builder().timeSource(clock).build()).build();
        assertThat(limiter.decide("c").allowed()).isTrue();
        refuse(limiter, clock, WARM);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        refuse(limiter, clock, ROUNDS);
        long perRefusal = (THREADS.getCurrentThreadAllocatedBytes() - before) / ROUNDS;

        Duration next = Duration.ofNanos(1);
        build(limit, next, WARM);
        before = THREADS.getCurrentThreadAllocatedBytes();
        build(limit, next, ROUNDS);
        long built = (THREADS.getCurrentThreadAllocatedBytes() - before) / ROUNDS;
        assertThat(perRefusal)
                .as("bytes per refusal; a decision, its list, its quota and a wait take %d", built)
                .isLessThanOrEqualTo(built + SLACK);
    }

    private static void admit(RateLimiter limiter, ManualClock clock, int rounds) {
        Duration step = Duration.ofMillis(200);
        for (int i = 0; i < rounds; i++) {
            clock.advance(step);
            Decision decision = limiter.decide("c");
            // quotas().get(0), not remaining(): its iterator would count here whenever the JIT keeps it
            if (!decision.allowed() || decision.quotas().get(0).remaining() != 9) {
                throw new AssertionError("not a whole bucket's admission: " + decision);
            }
            sink = decision;
        }
    }

    private static void drain(RateLimiter limiter, int rounds) {
        for (int i = 0; i < rounds; i++) {
            Decision decision = limiter.decide("c");
            if (!decision.allowed()) {
                throw new AssertionError("the bucket ran dry: " + decision);
            }
            sink = decision;
        }
    }

    private static void refuse(RateLimiter limiter, ManualClock clock, int rounds) {
        Duration step = Duration.ofNanos(1_000);
        for (int i = 0; i < rounds; i++) {
            clock.advance(step);
            Decision decision = limiter.decide("c");
            if (decision.allowed()) {
                throw new AssertionError("a spent bucket admitted: " + decision);
            }
            sink = decision;
        }
    }

    /** A decision, its list, its quota and one new duration, as a decision of this store could be. */
    private static void build(Limit limit, Duration step, int rounds) {
        Duration d = Duration.ZERO;
        for (int i = 0; i < rounds; i++) {
            d = d.plus(step);
            sink = new Decision(Decision.Outcome.ALLOWED,
                    List.of(new Decision.Quota(limit, true, 9 + (i & 1), d, Duration.ZERO, d)), Duration.ZERO);
        }
    }
}
