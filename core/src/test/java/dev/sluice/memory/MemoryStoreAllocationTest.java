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
 * ({@code com.sun.management.ThreadMXBean}): an admission under one limit costs no more than the
 * decision it returns.
 */
class MemoryStoreAllocationTest {

    private static final int ROUNDS = 50_000;
    /** Decisions before measuring: enough for the JIT's optimised code, whose allocations are the ones that last. */
    private static final int WARM = 300_000;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    /** Keeps every decision reachable, so that none is optimised away. */
    private static volatile Object sink;

    @Test
    void anAdmissionUnderOneLimitAllocatesOnlyItsDecisionListAndQuota() {
        ManualClock clock = new ManualClock();
        Limit limit = Limit.of("steady", "10/1s");
        RateLimiter limiter = RateLimiter.builder().limit(limit)
                .store(MemoryStore.builder().timeSource(clock).build()).build();
        // Each admission comes after the bucket is whole again (its state has expired) and leaves
        // the same reset: 100 ms to refill the token it spent.
        admit(limiter, clock, WARM);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        admit(limiter, clock, ROUNDS);
        long perAdmission = (THREADS.getCurrentThreadAllocatedBytes() - before) / ROUNDS;

        Duration reset = Duration.ofMillis(100);
        build(limit, reset, WARM);
        before = THREADS.getCurrentThreadAllocatedBytes();
        build(limit, reset, ROUNDS);
        long decisionListQuota = (THREADS.getCurrentThreadAllocatedBytes() - before) / ROUNDS;
        assertThat(perAdmission)
                .as("bytes per admission; a decision, its list and its quota take %d", decisionListQuota)
                .isLessThanOrEqualTo(decisionListQuota + 8);
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

    private static void build(Limit limit, Duration reset, int rounds) {
        for (int i = 0; i < rounds; i++) {
            sink = new Decision(Decision.Outcome.ALLOWED,
                    List.of(new Decision.Quota(limit, true, 9 + (i & 1), reset, Duration.ZERO, reset)), Duration.ZERO);
        }
    }
}
