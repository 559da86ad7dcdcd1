package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.testing.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A call whose slot comes back late keeps its place in line: it goes on the next on-time slot of a
 * call that asked after it, and that call on the next one, taking over the late call's new booking
 * as it goes, and no two calls go on one slot or on slots closer than the limit's interval by the
 * store's own times.
 *
 * <p>One call per interval ({@link #interval()}), burst 1, on a store whose clock the test moves;
 * the lateness bound is half an interval. The store's answers are held until the test lets them
 * go, so the order of events is the test's: A, B and C book the slots at 0, 1 and 2 intervals; A's
 * answer comes back at 1.3, beyond the bound, while B and C still wait. Before, A booked again at
 * the back (3) and went after B and C, or failed when what was left of its wait was shorter than
 * the queue. The limiter sleeps for real the waits it reserved, so nothing here asserts on real
 * time; the figures asserted are the instants the store granted.
 *
 * <p>Run on every store: a subclass gives one on the test's clock.
 */
public abstract class LateWaiterKeepsItsPlaceScenarios {

    /** The interval between slots, also what the limiter sleeps for real; the bound is half of it. */
    private final Duration interval = interval();
    private final Limit limit = Limit.of("provider", 1, interval).withBurst(1);

    private final ManualClock clock = new ManualClock();
    private final String key = "late-" + UUID.randomUUID();
    private final List<CompletableFuture<Decision>> calls = new ArrayList<>();
    private HeldAnswers store;

    /** A store of the kind under test, its time from {@code time}. */
    protected abstract RateLimitStore newStore(TimeSource time);

    /**
     * The interval between slots: 250 ms, so that a call in line with 0.7 of it left still hears
     * from a call that sleeps 0.1 of it on a busy machine. A store whose state expires in real
     * time (a Redis key's TTL, which the test's clock does not move) needs one long enough for the
     * real time the test takes between two bookings.
     */
    protected Duration interval() {
        return Duration.ofMillis(250);
    }

    private Duration times(double intervals) {
        return Duration.ofNanos((long) (interval.toNanos() * intervals));
    }

    @AfterEach
    void releaseEverything() {
        calls.forEach(call -> call.cancel(false));
        if (store != null) {
            store.releaseAll();
        }
    }

    /**
     * A store whose bookings' answers wait until the test lets them go, recording the instant each
     * granted on the store's clock (the clock stands still while it answers).
     */
    private final class HeldAnswers implements RateLimitStore {
        final RateLimitStore store;
        final List<Held> bookings = new CopyOnWriteArrayList<>();

        HeldAnswers(RateLimitStore store) {
            this.store = store;
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return store.decide(caller, limits);
        }

        @Override
        public CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
            Booking booking = store.book(caller, limits, maxWait).toCompletableFuture().join();
            Held held = new Held(booking, clock.nowMicros() + booking.decision().retryAfter().toNanos() / 1_000,
                    new CompletableFuture<>());
            bookings.add(held);
            return held.answer;
        }

        @Override
        public CompletionStage<Void> giveBack(String caller, List<Limit> limits, Booking booking) {
            return store.giveBack(caller, limits, booking);
        }

        /** The {@code i}-th booking (from 0), once it is made: at most 10 s. */
        Held booking(int i) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (bookings.size() <= i && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertThat(bookings).as("booking %d made", i).hasSizeGreaterThan(i);
            return bookings.get(i);
        }

        /** The instant the store granted the slot behind {@code decision}, in ms from the start. */
        long grantedMillis(Decision decision) {
            return bookings.stream().filter(held -> held.booking.decision() == decision).findFirst()
                    .map(held -> (held.grantedMicros - ManualClock.ALIGNED_START) / 1_000).orElseThrow();
        }

        void releaseAll() {
            bookings.forEach(held -> held.answer.complete(held.booking));
        }

        @Override
        public void close() {
            store.close();
        }
    }

    private record Held(RateLimitStore.Booking booking, long grantedMicros,
                        CompletableFuture<RateLimitStore.Booking> answer) {
        Duration granted() {
            return Duration.ofNanos((grantedMicros - ManualClock.ALIGNED_START) * 1_000);
        }

        void release() {
            answer.complete(booking);
        }
    }

    private Permits permits(Duration maxWait) {
        store = new HeldAnswers(newStore(clock));
        // the answers are held for up to seconds: a timeout that never cuts them short
        RateLimiter limiter = RateLimiter.builder().limit(limit).store(store).timeout(Duration.ofSeconds(30)).build();
        return Permits.builder(limiter).maxWait(maxWait).maxLateness(times(0.5))
                .nanoClock(() -> clock.nowMicros() * 1_000).build();
    }

    /**
     * One call for a permit, blocking a thread of {@code pool} or not, made once its booking is:
     * the {@code i}-th, granted {@code slot} after the start.
     */
    private CompletableFuture<Decision> ask(Permits permits, boolean blocking, ExecutorService pool, int i,
                                            Duration slot) throws InterruptedException {
        CompletableFuture<Decision> call = new CompletableFuture<>();
        calls.add(call);
        if (blocking) {
            pool.execute(() -> {
                try {
                    call.complete(permits.acquire(key));
                } catch (Throwable e) {
                    call.completeExceptionally(e);
                }
            });
        } else {
            permits.acquireAsync(key).whenComplete((decision, failure) -> {
                if (failure != null) {
                    call.completeExceptionally(failure);
                } else {
                    call.complete(decision);
                }
            });
        }
        assertThat(store.booking(i).granted()).as("booking %d", i).isEqualTo(slot);
        return call;
    }

    private void aGoesBeforeTheCallsThatAskedAfterIt(boolean blocking) throws Exception {
        Permits permits = permits(times(20));
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            CompletableFuture<Decision> a = ask(permits, blocking, pool, 0, Duration.ZERO);
            CompletableFuture<Decision> b = ask(permits, blocking, pool, 1, times(1));
            CompletableFuture<Decision> c = ask(permits, blocking, pool, 2, times(2));
            clock.advance(times(1.3));
            store.booking(0).release();
            assertThat(store.booking(3).granted()).as("A, back late, books again at the back").isEqualTo(times(3));
            assertThat(List.of(a, b, c)).as("all three still wait").noneMatch(CompletableFuture::isDone);

            // B's slot comes, 0.3 intervals ago on the store's clock: on time, and A asked first
            store.booking(1).release();
            CompletableFuture.anyOf(a, b).get(10, TimeUnit.SECONDS);
            assertThat(b).as("B, who asked after A, does not go first").isNotDone();
            Decision aWent = a.get(10, TimeUnit.SECONDS);
            assertThat(store.grantedMillis(aWent)).as("A goes on B's slot").isEqualTo(times(1).toMillis());

            // C's slot comes, on time: B asked first
            clock.advance(times(0.7));
            store.booking(2).release();
            CompletableFuture.anyOf(b, c).get(10, TimeUnit.SECONDS);
            assertThat(c).as("C, who asked after B, does not go first").isNotDone();
            Decision bWent = b.get(10, TimeUnit.SECONDS);
            assertThat(store.grantedMillis(bWent)).as("B goes on C's slot").isEqualTo(times(2).toMillis());

            // B took over the booking A made when it came back late, and C took it over from B
            store.releaseAll();
            Decision cWent = c.get(10, TimeUnit.SECONDS);
            assertThat(store.grantedMillis(cWent)).as("C goes on A's new booking").isEqualTo(times(3).toMillis());
            assertThat(store.bookings).as("no booking more than A's: each hand-down passes it on").hasSize(4);
            assertOneSlotEachAnIntervalApartInTheOrderAsked(aWent, bWent, cWent);
        } finally {
            pool.shutdownNow();
        }
    }

    private void assertOneSlotEachAnIntervalApartInTheOrderAsked(Decision... went) {
        assertThat(went).allMatch(Decision::allowed);
        List<Long> sent = Stream.of(went).map(store::grantedMillis).toList();
        assertThat(sent).as("in the order they asked, one slot each, at least an interval apart")
                .isSorted().doesNotHaveDuplicates();
        for (int i = 1; i < sent.size(); i++) {
            assertThat(sent.get(i) - sent.get(i - 1)).as("%s", sent).isGreaterThanOrEqualTo(interval.toMillis());
        }
    }

    /**
     * A, back late with less of its wait left than the queue ahead: its new booking is refused.
     * Before, it failed; now it waits on in line and goes on B's slot, and B, who has more of its
     * wait left, on a new one.
     */
    private void aWithTooLittleWaitLeftForTheBackOfTheQueueStillGoes(boolean blocking) throws Exception {
        Permits permits = permits(times(1.8));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            CompletableFuture<Decision> a = ask(permits, blocking, pool, 0, Duration.ZERO);
            clock.advance(times(0.9));
            CompletableFuture<Decision> b = ask(permits, blocking, pool, 1, times(1));
            clock.advance(times(0.2));
            store.booking(0).release();
            Held aAgain = store.booking(2);
            assertThat(aAgain.booking().decision().outcome()).as("0.7 intervals left, the back 0.9 ahead")
                    .isEqualTo(Decision.Outcome.REJECTED);

            // B's slot, 0.1 intervals ago: B sleeps 0.1 intervals for real, A, refused, waits 0.7 in line
            store.booking(1).release();
            aAgain.release();
            Decision aWent = a.get(10, TimeUnit.SECONDS);
            assertThat(store.grantedMillis(aWent)).as("A goes on B's slot").isEqualTo(times(1).toMillis());
            assertThat(store.booking(3).granted()).as("B books again, 1.6 intervals of its wait left")
                    .isEqualTo(times(2));
            store.releaseAll();
            Decision bWent = b.get(10, TimeUnit.SECONDS);
            assertOneSlotEachAnIntervalApartInTheOrderAsked(aWent, bWent);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anAsyncCallBackLateGoesBeforeTheCallsThatAskedAfterItOnTheirSlots() throws Exception {
        aGoesBeforeTheCallsThatAskedAfterIt(false);
    }

    @Test
    void aBlockingCallBackLateGoesBeforeTheCallsThatAskedAfterItOnTheirSlots() throws Exception {
        aGoesBeforeTheCallsThatAskedAfterIt(true);
    }

    @Test
    void anAsyncCallBackLateWithTooLittleWaitLeftForTheBackOfTheQueueStillGoesInItsPlace() throws Exception {
        aWithTooLittleWaitLeftForTheBackOfTheQueueStillGoes(false);
    }

    @Test
    void aBlockingCallBackLateWithTooLittleWaitLeftForTheBackOfTheQueueStillGoesInItsPlace() throws Exception {
        aWithTooLittleWaitLeftForTheBackOfTheQueueStillGoes(true);
    }
}
