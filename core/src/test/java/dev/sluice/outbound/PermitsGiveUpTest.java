package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.Lease;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.ManualClock;
import dev.sluice.testing.Waiting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stage of {@link Permits#acquireAsync} or {@link Permits#enterAsync} completed by anyone but
 * the permits (cancelled, {@code orTimeout}, {@code completeOnTimeout}, the caller) gives back what
 * it waited for: the reservation (the next caller gets its slot while it is the last one booked)
 * and the place in flight. The slot of one call per 100 s never comes during a test (the store's
 * clock is a manual one); what is asserted is what the store holds afterwards.
 */
class PermitsGiveUpTest {

    private static final Limit SLOW = Limit.of("provider", 10, Duration.ofSeconds(1000)).withBurst(1);
    /** Long enough that nothing given up here runs out of its own accord during a test. */
    private static final Duration PATIENT = Duration.ofSeconds(1000);
    private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final ManualClock clock = new ManualClock();
    private final MemoryStore store = MemoryStore.builder().timeSource(clock).build();
    private final RateLimiter limiter = RateLimiter.builder().limit(SLOW).store(store).timeout(Duration.ofSeconds(5))
            .build();
    private final List<CompletableFuture<?>> stages = new ArrayList<>();

    @AfterEach
    void cancelWhatStillWaits() {
        // a pending timer keeps Sluice's timer thread, which TimeoutsTest expects to end
        stages.forEach(stage -> stage.cancel(false));
    }

    private <T> CompletableFuture<T> kept(CompletableFuture<T> stage) {
        stages.add(stage);
        return stage;
    }

    /** The wait the next reservation of {@code key} would get, asked without booking anything. */
    private Duration nextSlot(String key) {
        Decision probe = store.reserve(key, List.of(SLOW), Duration.ZERO).toCompletableFuture().join();
        assertThat(probe.allowed()).as("a probe books nothing: %s", probe).isFalse();
        return probe.retryAfter();
    }

    /**
     * Polls (bounded) until the next slot of {@code key} is {@code expected}; the give-back may run on another thread.
     */
    private void awaitNextSlot(String key, Duration expected, String why) throws InterruptedException {
        long deadline = System.nanoTime() + BOUND_NANOS;
        while (!nextSlot(key).equals(expected) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(nextSlot(key)).as(why).isEqualTo(expected);
    }

    @Test
    void anAcquireTimedOutGivesItsSlotToTheNextCaller() throws Exception {
        Permits permits = Permits.of(limiter, PATIENT);
        assertThat(permits.acquireAsync("p").get(5, TimeUnit.SECONDS).retryAfter()).isZero();
        CompletableFuture<Decision> late = kept(permits.acquireAsync("p")).orTimeout(20, TimeUnit.MILLISECONDS);
        assertThat(late).failsWithin(Duration.ofSeconds(5)).withThrowableOfType(Exception.class)
                .withCauseInstanceOf(TimeoutException.class);
        awaitNextSlot("p", Duration.ofSeconds(100), "the timed-out call's slot, given back, is the next caller's");
    }

    @Test
    void anAcquireTheCallerCompletesGivesItsSlotToTheNextCaller() throws Exception {
        Permits permits = Permits.of(limiter, PATIENT);
        permits.acquireAsync("p").get(5, TimeUnit.SECONDS);
        CompletableFuture<Decision> completed = kept(permits.acquireAsync("p"))
                .completeOnTimeout(null, 20, TimeUnit.MILLISECONDS);
        assertThat(completed.get(5, TimeUnit.SECONDS)).isNull();
        awaitNextSlot("p", Duration.ofSeconds(100), "completeOnTimeout: the slot, given back, is the next caller's");
        CompletableFuture<Decision> byHand = kept(permits.acquireAsync("p"));
        assertThat(byHand.complete(null)).isTrue();
        awaitNextSlot("p", Duration.ofSeconds(100),
                "complete(..) by the caller: the slot, given back, is the next caller's");
    }

    @Test
    void aLowPriorityAcquireTimedOutGivesItsSharedSlotBack() throws Exception {
        Permits permits = Permits.builder(limiter).maxWait(PATIENT).highPriorityShare(0.3).build();
        permits.acquireAsync("p", Priority.HIGH).get(5, TimeUnit.SECONDS);
        CompletableFuture<Decision> late = kept(permits.acquireAsync("p", Priority.LOW))
                .orTimeout(20, TimeUnit.MILLISECONDS);
        assertThat(late).failsWithin(Duration.ofSeconds(5));
        awaitNextSlot("p", Duration.ofSeconds(100), "the timed-out low-priority call's shared slot, given back");
    }

    /** One place in flight on a store with a real clock (leases expire on it), waits of {@code maxWait}. */
    private static Permits onePlace(MemoryStore store, Duration maxWait) {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 1000, Duration.ofSeconds(1)))
                .store(store)
                .timeout(Duration.ofSeconds(5)).build();
        return Permits.builder(limiter).maxWait(maxWait).maxInFlight(1).build();
    }

    @Test
    void anEnterTimedOutTakesNoPlace() throws Exception {
        MemoryStore real = MemoryStore.create();
        Permits permits = onePlace(real, Duration.ofMillis(500));
        Lease held = permits.enter("p");
        long started = System.nanoTime();
        CompletableFuture<Lease> late = kept(permits.enterAsync("p")).orTimeout(20, TimeUnit.MILLISECONDS);
        assertThat(late).failsWithin(Duration.ofSeconds(5));
        held.release();
        // the place stays free past the waiter's own wait: a waiter still asking would take it by then
        while (System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(700)) {
            Thread.sleep(20);
        }
        Lease again = permits.enter("p");
        assertThat(again.held()).as("the place, free: the timed-out waiter took none").isTrue();
        again.release();
    }

    @Test
    void aCancelRacingTheGrantLeavesThePlaceFree() throws Exception {
        MemoryStore real = MemoryStore.create();
        Permits permits = onePlace(real, Duration.ofSeconds(1));
        Permits probe = onePlace(real, Duration.ZERO);
        for (int i = 0; i < 2_000; i++) {
            CompletableFuture<Lease> waiter = permits.enterAsync("p");
            // cancel around the moment the place is granted, a little earlier or later each time
            for (int spin = ThreadLocalRandom.current().nextInt(2_000); spin > 0; spin--) {
                Thread.onSpinWait();
            }
            if (!waiter.cancel(false)) {
                waiter.get(5, TimeUnit.SECONDS).release();
            }
            awaitFree(probe, "iteration " + i);
        }
    }

    @Test
    void anEnterInterruptedWhileTheStoreAnswersTakesNoPlace() throws Exception {
        MemoryStore real = MemoryStore.create();
        HeldLeases slow = new HeldLeases(real);
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 1000, Duration.ofSeconds(1)))
                .store(slow).timeout(Duration.ofSeconds(30)).build();
        Permits permits = Permits.builder(limiter).maxWait(PATIENT).maxInFlight(1).build();
        AtomicReference<Object> ended = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                ended.set(permits.enter("p"));
            } catch (Throwable e) {
                ended.set(e);
            }
        });
        waiter.start();
        CompletableFuture<Decision> asked = slow.asked.get(10, TimeUnit.SECONDS);
        Waiting.untilTimedWaiting(waiter);
        waiter.interrupt();
        waiter.join(5_000);
        assertThat(ended.get()).as("an interrupted caller is told so, not let in by the failure mode")
                .isInstanceOf(InterruptedException.class);
        // then the store grants the place, to a caller who is gone: it must come back
        slow.answer(asked);
        awaitFree(onePlace(real, Duration.ZERO), "after the interrupted caller's late lease");
    }

    /** {@code store}, whose first lease is granted only when the test answers it. */
    private static final class HeldLeases implements RateLimitStore {
        private final RateLimitStore store;
        final CompletableFuture<CompletableFuture<Decision>> asked = new CompletableFuture<>();
        private final List<Runnable> held = new ArrayList<>();

        HeldLeases(RateLimitStore store) {
            this.store = store;
        }

        @Override
        public synchronized CompletionStage<Decision> acquireLease(String caller, Limit limit, String leaseId) {
            if (asked.isDone()) {
                return store.acquireLease(caller, limit, leaseId);
            }
            CompletableFuture<Decision> later = new CompletableFuture<>();
            held.add(() -> later.complete(store.acquireLease(caller, limit, leaseId).toCompletableFuture().join()));
            asked.complete(later);
            return later;
        }

        /** Takes the lease now, and answers the limiter that no longer waits. */
        synchronized void answer(CompletableFuture<Decision> later) {
            held.forEach(Runnable::run);
            assertThat(later).isDone();
        }

        @Override
        public CompletionStage<Void> releaseLease(String caller, Limit limit, String leaseId) {
            return store.releaseLease(caller, limit, leaseId);
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return store.decide(caller, limits);
        }

        @Override
        public void close() {
        }
    }

    /** Polls (bounded) until a place of {@code probe}'s key is free, then gives it back. */
    private static void awaitFree(Permits probe, String when) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            try {
                probe.enter("p").release();
                return;
            } catch (PermitUnavailableException e) {
                assertThat(System.nanoTime()).as("%s: the place is still held, given up by its waiter", when)
                        .isLessThan(deadline);
                Thread.sleep(1);
            }
        }
    }
}
