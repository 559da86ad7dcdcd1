package dev.sluice.tck;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.Priority;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Permits}' priorities in real time (the store's own clock), three instances sharing one
 * store's state ({@link RateLimitStoreKit#sharedInstances()}): a backlog of low-priority calls (60
 * waiters, six seconds of their lane) and, behind it, high-priority calls within their share. The
 * shared limit is 20 per second, burst 4, half of it kept for high priority: the lane is 10 per
 * second, burst 2. High-priority calls come one at a time, four per second (within the share of
 * 10, a burst of 1 within 4 - 2), so none must wait for the backlog: in theory none waits at all
 * beyond the lag between a lane slot and its booking in the shared limit; the bound asserted,
 * 400 ms, leaves a loaded machine its pauses, while without the lane the first would wait behind
 * 60 bookings (3 s) and booking lane and shared limit in one reservation would make it wait for the
 * whole backlog (6 s). Every grant is counted against the limits: the k-th grant since the start,
 * at t, satisfies k &lt;= burst + rate * t (a grant goes out at its slot or later, so this holds
 * whatever the lag) for the shared limit over all calls and for the lane over the low-priority ones.
 */
abstract class PriorityScenarios extends Scenarios {

    private static final Limit SHARED = Limit.of("provider", 20, Duration.ofSeconds(1)).withBurst(4);
    private static final int BACKLOG = 60;
    private static final int HIGH_CALLS = 8;
    private static final Duration HIGH_BOUND = Duration.ofMillis(400);

    PriorityScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    private static Permits permits(RateLimitStore store) {
        RateLimiter limiter = RateLimiter.builder().limit(SHARED).store(store).timeout(Duration.ofSeconds(2)).build();
        return Permits.builder(limiter).maxWait(Duration.ofSeconds(10)).highPriorityShare(0.5)
                .lowPriorityMaxWait(Duration.ofSeconds(20)).build();
    }

    @Test
    void aLowPriorityBacklogNeverHoldsAHighPriorityCallWithinItsShareAndTheLimitsHold() throws Exception {
        List<RateLimitStore> stores = sharedInstances();
        try {
            highPriorityCallsPassTheBacklog(stores.stream().map(PriorityScenarios::permits).toList());
        } finally {
            // one store may stand for all three instances: close each once
            stores.stream().distinct().forEach(RateLimitStore::close);
        }
    }

    private void highPriorityCallsPassTheBacklog(List<Permits> instances) throws Exception {
        String key = "provider-" + System.nanoTime();
        assertThat(instances.get(0).lowPriorityLimits()).as("the lane: half of 20/s, half of burst 4")
                .extracting(Limit::policy, Limit::count, Limit::burst)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("provider~low", 10L, 2L));

        long start = System.nanoTime();
        List<Long> lowGrants = Collections.synchronizedList(new ArrayList<>());
        List<Long> allGrants = Collections.synchronizedList(new ArrayList<>());
        List<CompletableFuture<Decision>> backlog = new ArrayList<>();
        for (int i = 0; i < BACKLOG; i++) {
            CompletableFuture<Decision> call = instances.get(i % 3).acquireAsync(key, Priority.LOW);
            call.thenRun(() -> {
                long now = System.nanoTime();
                lowGrants.add(now);
                allGrants.add(now);
            });
            backlog.add(call);
        }
        TimeUnit.MILLISECONDS.sleep(500);
        assertThat(backlog.stream().filter(CompletableFuture::isDone).count()).as("a backlog still waits")
                .isLessThan(BACKLOG / 2);

        List<Long> waits = new ArrayList<>();
        for (int i = 0; i < HIGH_CALLS; i++) {
            long asked = System.nanoTime();
            Decision decision = instances.get(i % 3).acquire(key, Priority.HIGH);
            long granted = System.nanoTime();
            allGrants.add(granted);
            assertThat(decision.allowed()).isTrue();
            waits.add(granted - asked);
            TimeUnit.MILLISECONDS.sleep(250);
        }
        AtomicInteger lowAllowed = new AtomicInteger();
        for (CompletableFuture<Decision> call : backlog) {
            if (call.get(30, TimeUnit.SECONDS).allowed()) {
                lowAllowed.incrementAndGet();
            }
        }
        long lowDone = System.nanoTime();

        assertThat(waits.stream().mapToLong(Long::longValue).max().orElseThrow())
                .as("the longest wait of a high-priority call (ns), all: %s", waits)
                .isLessThanOrEqualTo(HIGH_BOUND.toNanos());
        assertThat(lowAllowed.get()).as("every low-priority call got its permit").isEqualTo(BACKLOG);
        assertThat(Duration.ofNanos(lowDone - start)).as("the lane's 10 per second: 60 calls take at least 5.8 s")
                .isGreaterThan(Duration.ofMillis(5800));
        assertWithin(allGrants, start, SHARED.burst(), SHARED.count(), "the shared limit, every call");
        assertWithin(lowGrants, start, 2, 10, "the lane, the low-priority calls");
    }

    /** The k-th grant (from 1) at t seconds after {@code start}: k <= burst + rate * t. */
    private static void assertWithin(List<Long> grants, long start, long burst, long perSecond, String what) {
        List<Long> sorted = new ArrayList<>(grants);
        Collections.sort(sorted);
        for (int k = 1; k <= sorted.size(); k++) {
            double seconds = (sorted.get(k - 1) - start) / 1e9;
            assertThat((double) k).as("%s: grant %d at %.3f s", what, k, seconds)
                    .isLessThanOrEqualTo(burst + perSecond * seconds);
        }
    }
}
