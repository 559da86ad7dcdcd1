package dev.sluice;

import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RateLimiter#acquire} and {@link RateLimiter#acquireAsync} in real time on the memory
 * store: waiting for the reserved slot, refusing beyond the longest wait, a waiter that gives up
 * (its slot goes to the next caller; see {@code GivenUpSlotsTest} for one inside the schedule,
 * which passes unused: never two calls in one slot), and the failure modes. The store's arithmetic (and its Lua twin)
 * is in the store contract and the twin test; here the waits are real, so the margins are wide:
 * a slot 400 ms apart is never reached in under 300 ms.
 */
class AcquireTest {

    /** One permit now, then one every 400 ms. */
    private static final Limit SLOW = Limit.of("outbound", 5, Duration.ofSeconds(2)).withBurst(1);
    private static final Duration PATIENT = Duration.ofSeconds(10);

    private static RateLimiter limiter(RateLimitStore store, FailureMode mode) {
        return RateLimiter.builder().limit(SLOW).store(store).failureMode(mode).timeout(Duration.ofSeconds(2)).build();
    }

    @Test
    void aSecondAcquireWaitsForItsSlotAndOneBeyondItsLongestWaitIsRefusedAtOnce() throws InterruptedException {
        RateLimiter limiter = limiter(MemoryStore.create(), FailureMode.OPEN);
        assertThat(limiter.acquire("p", Duration.ZERO).outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        long started = System.nanoTime();
        Decision second = limiter.acquire("p", PATIENT);
        long waited = System.nanoTime() - started;
        assertThat(second.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(second.retryAfter()).as("the wait reserved")
                .isBetween(Duration.ofMillis(300), Duration.ofMillis(400));
        assertThat(waited).as("slept until the slot").isGreaterThanOrEqualTo(second.retryAfter().toNanos());

        started = System.nanoTime();
        Decision refused = limiter.acquire("p", Duration.ofMillis(100));
        assertThat(refused.outcome()).isEqualTo(Decision.Outcome.REJECTED);
        assertThat(refused.retryAfter()).as("the wait it would need").isGreaterThan(Duration.ofMillis(100));
        assertThat(System.nanoTime() - started).as("refused without waiting")
                .isLessThan(TimeUnit.MILLISECONDS.toNanos(300));
    }

    @Test
    void anInterruptedWaiterSendsNothingAndItsSlotGoesToTheNextCaller() throws Exception {
        RateLimiter limiter = limiter(MemoryStore.create(), FailureMode.OPEN);
        limiter.acquire("p", Duration.ZERO);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                limiter.acquire("p", PATIENT);
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        waiter.start();
        TimeUnit.MILLISECONDS.sleep(100);
        waiter.interrupt();
        waiter.join(5_000);
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        // the given-up slot (400 ms from the first) was the last one booked: the next caller gets
        // it, not the one after it (800 ms from the first)
        Decision next = limiter.acquire("p", Duration.ofMillis(450));
        assertThat(next.outcome()).as("the given-up slot is the next caller's").isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(next.retryAfter()).isLessThanOrEqualTo(Duration.ofMillis(400));
    }

    @Test
    void aStageCompletesWhenItsSlotComesAndACancelledOneHoldsNoThread() throws Exception {
        // slots 2 s apart: a loaded machine does not reach the next one before the stage is looked at
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("outbound", 1, Duration.ofSeconds(2))).build();
        long first = System.nanoTime();
        assertThat(limiter.acquireAsync("p", Duration.ZERO).get(5, TimeUnit.SECONDS).retryAfter()).isZero();
        CompletableFuture<Decision> given = limiter.acquireAsync("p", PATIENT);
        assertThat(given.isDone()).as("waits for its slot without a thread: %s", given.getNow(null)).isFalse();
        assertThat(given.cancel(false)).isTrue();
        long started = System.nanoTime();
        Decision decision = limiter.acquireAsync("p", Duration.ofMillis(4500)).get(10, TimeUnit.SECONDS);
        assertThat(decision.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        // The cancelled second slot, 2 s after the first grant, was the last booked: the next
        // caller gets it, not the one 4 s after. Measured from before the first grant, so a
        // stalled test thread only makes it later.
        assertThat(decision.retryAfter()).as("the cancelled slot, not the one after it")
                .isLessThanOrEqualTo(Duration.ofSeconds(2));
        assertThat(Duration.ofNanos(System.nanoTime() - first)).as("not before the cancelled slot")
                .isGreaterThan(Duration.ofMillis(1500));
        assertThat(System.nanoTime() - started).as("completed at its slot")
                .isGreaterThanOrEqualTo(decision.retryAfter().toNanos());
    }

    @Test
    void whenTheStoreFailsOpenGoesAtOnceClosedFailsAndLocalWaitsOnTheLocalShare() throws InterruptedException {
        long started = System.nanoTime();
        assertThat(limiter(new BrokenStore(), FailureMode.OPEN).acquire("p", PATIENT).outcome())
                .isEqualTo(Decision.Outcome.FAILED_OPEN);
        assertThat(limiter(new BrokenStore(), FailureMode.CLOSED).acquire("p", PATIENT).outcome())
                .isEqualTo(Decision.Outcome.FAILED_CLOSED);
        assertThat(System.nanoTime() - started).as("neither waits").isLessThan(TimeUnit.SECONDS.toNanos(1));

        RateLimiter local = limiter(new BrokenStore(), FailureMode.LOCAL);
        assertThat(local.acquire("p", PATIENT).outcome()).isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
        started = System.nanoTime();
        Decision second = local.acquire("p", PATIENT);
        assertThat(second.outcome()).isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
        assertThat(second.retryAfter()).as("the local bucket's next slot")
                .isBetween(Duration.ofMillis(300), Duration.ofMillis(400));
        assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(second.retryAfter().toNanos());
        assertThat(local.acquire("p", Duration.ofMillis(100)).outcome()).isEqualTo(Decision.Outcome.LOCAL_REJECTED);
    }

    /**
     * A provider's pause ({@link RateLimiter#pause}) holds the next waiter until it ends plus one
     * token's time (the bucket refills from empty); with the store down, {@link FailureMode#LOCAL}
     * holds the local share the same way, and the pause reports that the store did not record it.
     */
    @Test
    void aPauseHoldsTheNextWaiterUntilItEndsAndLocallyWhenTheStoreIsDown() throws InterruptedException {
        RateLimiter shared = limiter(MemoryStore.create(), FailureMode.OPEN);
        assertThat(shared.pause("p", Duration.ofMillis(800))).as("recorded").isTrue();
        Decision first = shared.acquire("p", Duration.ZERO);
        assertThat(first.outcome()).as("nothing during the pause").isEqualTo(Decision.Outcome.REJECTED);
        long started = System.nanoTime();
        Decision waited = shared.acquire("p", PATIENT);
        assertThat(waited.outcome()).isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(waited.retryAfter()).as("the pause's end (800 ms) and one token (400 ms), less the time since")
                .isBetween(Duration.ofMillis(800), Duration.ofMillis(1200));
        assertThat(System.nanoTime() - started).isGreaterThanOrEqualTo(waited.retryAfter().toNanos());

        RateLimiter local = limiter(new BrokenStore(), FailureMode.LOCAL);
        assertThat(local.pause("p", Duration.ofMillis(800))).as("the store did not record it").isFalse();
        Decision held = local.acquire("p", PATIENT);
        assertThat(held.outcome()).isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
        assertThat(held.retryAfter()).as("the local share, paused as well")
                .isBetween(Duration.ofMillis(800), Duration.ofMillis(1200));
    }

    @Test
    void aSlidingLogCannotWaitAWaitOutOfRangeIsRefusedNamingItAndACostAboveTheBurstNeverWaits()
            throws InterruptedException {
        RateLimiter log = RateLimiter.builder().limit(SLOW.withAlgorithm(Algorithm.SLIDING_LOG)).build();
        assertThatThrownBy(() -> log.acquire("p", Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sliding-log");
        RateLimiter limiter = limiter(MemoryStore.create(), FailureMode.OPEN);
        assertThatThrownBy(() -> limiter.acquire("p", Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'maxWait'");
        assertThat(limiter.acquire("p", 2, PATIENT).outcome()).isEqualTo(Decision.Outcome.UNSATISFIABLE);
    }
}
