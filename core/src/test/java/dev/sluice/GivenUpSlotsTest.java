package dev.sluice;

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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A waiter that gives up returns its reservation ({@link RateLimiter#acquire} interrupted,
 * {@link RateLimiter#acquireAsync}'s stage cancelled or timed out): the quota used is what was
 * sent. At one call per 100 s with a burst of one, reservations A, B and C hold the slots at 0,
 * 100 s and 200 s. C, the last, given up: the next caller gets C's slot. B, given up while C is
 * booked behind it: the store keeps B's slot, and the next caller takes it before the schedule
 * is extended; no two calls share a slot.
 * The store's clock is a manual one, so no slot comes during a test; the stores' arithmetic (and
 * its Lua twin) is in the store contract.
 */
class GivenUpSlotsTest {

    private static final Limit SLOW = Limit.of("provider", 1, Duration.ofSeconds(100)).withBurst(1);
    private static final Duration PATIENT = Duration.ofSeconds(1000);

    private final ManualClock clock = new ManualClock();
    private final RateLimitStore store = MemoryStore.builder().timeSource(clock).build();
    private final RateLimiter limiter = RateLimiter.builder().limit(SLOW).store(store).timeout(Duration.ofSeconds(10))
            .build();

    /** The stages still waiting at the end of a test: their timers, 100 s and more away, go with them. */
    private final List<CompletableFuture<Decision>> waiting = new ArrayList<>();

    @AfterEach
    void cancelTheWaiters() {
        // a pending timer keeps Sluice's timer thread, which TimeoutsTest expects to end
        waiting.forEach(stage -> stage.cancel(false));
    }

    /** A stage of {@code limiter}, cancelled after the test if it still waits. */
    private CompletableFuture<Decision> waiter(RateLimiter limiter, Duration maxWait) {
        CompletableFuture<Decision> stage = limiter.acquireAsync("p", maxWait);
        waiting.add(stage);
        return stage;
    }

    /** The wait the next reservation gets, asked of the store itself. */
    private Duration nextSlot() {
        return store.reserve("p", List.of(SLOW), PATIENT).toCompletableFuture().join().retryAfter();
    }

    /**
     * Waits, at most 5 s, until a request could be allowed {@code end} from now: asked by a
     * decision, which consumes nothing when refused. A stage shows done before the actions it
     * runs on completing (the give-back) have run on the completing thread.
     */
    private void awaitScheduleEnd(Duration end) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (store.decide("p", List.of(SLOW)).toCompletableFuture().join().retryAfter().compareTo(end) > 0
                && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
    }

    @Test
    void aCancelledStageAtTheEndOfTheScheduleHandsItsSlotToTheNextCaller() throws Exception {
        assertThat(limiter.acquireAsync("p", Duration.ZERO).get(5, TimeUnit.SECONDS).retryAfter()).isZero();
        CompletableFuture<Decision> b = waiter(limiter, PATIENT);
        CompletableFuture<Decision> c = waiter(limiter, PATIENT);
        assertThat(b.isDone() || c.isDone()).as("both wait for their slots").isFalse();
        assertThat(c.cancel(false)).isTrue();
        assertThat(nextSlot()).as("C's slot, given up, is the next caller's").isEqualTo(Duration.ofSeconds(200));
    }

    @Test
    void aTimedOutStageAtTheEndOfTheScheduleHandsItsSlotToTheNextCaller() throws Exception {
        limiter.acquireAsync("p", Duration.ZERO).get(5, TimeUnit.SECONDS);
        CompletableFuture<Decision> b = waiter(limiter, PATIENT);
        CompletableFuture<Decision> c = waiter(limiter, PATIENT).orTimeout(10, TimeUnit.MILLISECONDS);
        assertThat(c).failsWithin(Duration.ofSeconds(5));
        assertThat(b.isDone()).isFalse();
        // the give-back runs on the timer thread as it completes the stage, after the stage shows done
        awaitScheduleEnd(Duration.ofSeconds(200));
        assertThat(nextSlot()).as("C's slot, timed out, is the next caller's").isEqualTo(Duration.ofSeconds(200));
    }

    @Test
    void aStageGivenUpInsideTheScheduleGoesToTheNextCallerAndNoTwoCallsShareASlot() throws Exception {
        limiter.acquireAsync("p", Duration.ZERO).get(5, TimeUnit.SECONDS);
        CompletableFuture<Decision> b = waiter(limiter, PATIENT);
        CompletableFuture<Decision> c = waiter(limiter, PATIENT);
        assertThat(b.cancel(false)).isTrue();
        assertThat(nextSlot()).as("B's slot, given up before C's, is the next caller's")
                .isEqualTo(Duration.ofSeconds(100));
        assertThat(c.cancel(false)).isTrue();
        assertThat(nextSlot()).as("C's slot, the last of the schedule, is the next caller's")
                .isEqualTo(Duration.ofSeconds(200));
        assertThat(nextSlot()).as("each slot goes once: then the schedule goes on").isEqualTo(Duration.ofSeconds(300));
    }

    @Test
    void anInterruptedWaiterAtTheEndOfTheScheduleHandsItsSlotToTheNextCaller() throws Exception {
        limiter.acquire("p", Duration.ZERO);
        CompletableFuture<Decision> b = waiter(limiter, PATIENT);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                limiter.acquire("p", PATIENT);
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        waiter.start();
        // sleeping until its slot, 200 s away on the store's clock (real time here): reserved
        Waiting.untilTimedWaiting(waiter);
        waiter.interrupt();
        waiter.join(5_000);
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        assertThat(b.isDone()).isFalse();
        assertThat(nextSlot()).as("the interrupted waiter's slot is the next caller's")
                .isEqualTo(Duration.ofSeconds(200));
    }

    @Test
    void aLocalReservationGivenUpAtTheEndOfTheLocalScheduleHandsItsSlotToTheNextCaller() throws Exception {
        RateLimiter local = RateLimiter.builder().limit(SLOW).store(new BrokenStore()).failureMode(FailureMode.LOCAL)
                .timeout(Duration.ofSeconds(10)).build();
        assertThat(local.acquireAsync("p", Duration.ZERO).get(5, TimeUnit.SECONDS).outcome())
                .isEqualTo(Decision.Outcome.LOCAL_ALLOWED);
        CompletableFuture<Decision> b = waiter(local, PATIENT);
        CompletableFuture<Decision> c = waiter(local, PATIENT);
        assertThat(b.isDone() || c.isDone()).as("both wait for their local slots (100 s and 200 s on)").isFalse();
        assertThat(c.cancel(false)).isTrue();
        // C's slot, 200 s on, is free again: within 250 s the next caller gets it (300 s would be refused at once)
        CompletableFuture<Decision> next = waiter(local, Duration.ofSeconds(250));
        assertThat(next.isDone()).as("waits for C's slot: %s", next.getNow(null)).isFalse();
        next.cancel(false);
        assertThat(b.cancel(false)).isTrue();
    }

    @Test
    void aReservationTheStoreBooksAfterTheLimiterTimedOutIsGivenBack() throws Exception {
        limiter.acquire("p", Duration.ZERO);
        HeldBookings slow = new HeldBookings(store);
        RateLimiter impatient = RateLimiter.builder().limit(SLOW).store(slow).timeout(Duration.ofMillis(50)).build();
        // blocking: the limiter stops waiting at its timeout and answers with its failure mode
        assertThat(impatient.acquire("p", PATIENT).outcome()).isEqualTo(Decision.Outcome.FAILED_OPEN);
        // then the store books the slot at 100 s, for a waiter who is gone: it must come back
        slow.answerWhatWasHeld();
        assertThat(nextSlot()).as("the late booking's slot, given back, is the next caller's")
                .isEqualTo(Duration.ofSeconds(100));
        // without blocking: the same, through the stage's own timeout
        assertThat(impatient.acquireAsync("p", PATIENT).get(5, TimeUnit.SECONDS).outcome())
                .isEqualTo(Decision.Outcome.FAILED_OPEN);
        slow.answerWhatWasHeld();
        assertThat(nextSlot()).as("the late booking's slot, given back, is the next caller's")
                .isEqualTo(Duration.ofSeconds(200));
    }

    @Test
    void aWaiterInterruptedWhileTheStoreBooksThrowsAndItsBookingIsGivenBack() throws Exception {
        limiter.acquire("p", Duration.ZERO);
        HeldBookings slow = new HeldBookings(store);
        RateLimiter patient = RateLimiter.builder().limit(SLOW).store(slow).timeout(Duration.ofSeconds(30)).build();
        AtomicReference<Object> ended = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                ended.set(patient.acquire("p", PATIENT));
            } catch (Throwable e) {
                ended.set(e);
            }
        });
        waiter.start();
        // asked the store, which has not answered: the waiter waits for the answer, not for a slot
        slow.awaitHeld();
        Waiting.untilTimedWaiting(waiter);
        waiter.interrupt();
        waiter.join(5_000);
        assertThat(ended.get()).as("an interrupted waiter is told so, not let through by the failure mode")
                .isInstanceOf(InterruptedException.class);
        assertThat(patient.storeFailures()).as("an interrupt is not the store's failure").isZero();
        // then the store books the slot at 100 s, for the waiter who is gone: it must come back
        slow.answerWhatWasHeld();
        assertThat(nextSlot()).as("the interrupted waiter's booking, given back, is the next caller's")
                .isEqualTo(Duration.ofSeconds(100));
    }

    /**
     * {@code store}, whose bookings are held back until the test answers them: a store that
     * answers after the limiter's timeout, with the reservation it made for a waiter already gone.
     */
    private static final class HeldBookings implements RateLimitStore {
        private final RateLimitStore store;
        private final List<Runnable> held = new ArrayList<>();

        HeldBookings(RateLimitStore store) {
            this.store = store;
        }

        @Override
        public synchronized CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
            CompletableFuture<Booking> later = new CompletableFuture<>();
            held.add(() -> later.complete(store.book(caller, limits, maxWait).toCompletableFuture().join()));
            return later;
        }

        /** Waits, at most 10 s, until a booking is held. */
        void awaitHeld() throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline) {
                synchronized (this) {
                    if (!held.isEmpty()) {
                        return;
                    }
                }
                Thread.sleep(1);
            }
            throw new AssertionError("no booking asked within 10 s");
        }

        /** Books now what was asked before, and answers the limiter that no longer waits. */
        synchronized void answerWhatWasHeld() {
            assertThat(held).as("bookings held").isNotEmpty();
            held.forEach(Runnable::run);
            held.clear();
        }

        @Override
        public CompletionStage<Void> giveBack(String caller, List<Limit> limits, Booking booking) {
            return store.giveBack(caller, limits, booking);
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return store.decide(caller, limits);
        }

        @Override
        public void close() {
        }
    }
}
