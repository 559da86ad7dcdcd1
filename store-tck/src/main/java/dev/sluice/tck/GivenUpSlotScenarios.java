package dev.sluice.tck;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.TimeSource;
import dev.sluice.spi.RateLimitStore;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Reservations given up by their waiters: the slot goes to the next caller, and no two calls share one. */
abstract class GivenUpSlotScenarios extends Scenarios {

    GivenUpSlotScenarios(RateLimitStoreKit kit) {
        super(kit);
    }

    private static RateLimitStore.Booking book(RateLimitStore store, String caller, Limit limit,
            double maxWaitSeconds) {
        return store.book(caller, List.of(limit), seconds(maxWaitSeconds)).toCompletableFuture().join();
    }

    /**
     * Reservations given up by their waiters ({@link RateLimitStore#giveBack}): the quota used is
     * what was sent, and no two calls share a slot. Five fit now; A, B and C wait. C, the last,
     * given up: the next reservation, D, gets C's slot. B, given up while C's slot is taken by D
     * behind it: a bucket keeps B's slot, and the next reservation takes it before it extends the
     * schedule (the one after goes after D); a window lowers B's window's count, whose order
     * within does not matter, so the next gets B's place.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithmThatWaits")
    void aReservationGivenUpAheadReturnsItsSlotWhereNoTwoCallsShareOne(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimitStore store = newStore(clock);
        Limit limit = FIVE.withAlgorithm(algorithm);
        String caller = "give-back-" + UUID.randomUUID();
        // the waits of A, B and C, made at 0 s, and of the next after B is given up behind D
        double[] waits = switch (algorithm) {
            // one token per 20 s; B's slot at 40 s, given back, is the next one's
            case TOKEN_BUCKET, GCRA -> new double[] {20, 40, 60, 40};
            // the next window holds five; B's place in it is free again
            case FIXED_WINDOW -> new double[] {100, 100, 100, 100};
            // A, B, C in the next window at 5 * (100 - e) / 100 + counted + 1 <= 5; B given
            // back, two counted there (A, D): the next fits where D did
            case SLIDING_WINDOW -> new double[] {120, 140, 160, 160};
            case SLIDING_LOG, CONCURRENCY -> throw new IllegalArgumentException("cannot wait: " + algorithm);
        };
        String where = algorithm + " on " + storeName();
        for (int i = 0; i < 5; i++) {
            assertThat(book(store, caller, limit, 0).decision().retryAfter()).as(where + ": reservation " + i).isZero();
        }
        RateLimitStore.Booking a = book(store, caller, limit, 1000);
        RateLimitStore.Booking b = book(store, caller, limit, 1000);
        RateLimitStore.Booking c = book(store, caller, limit, 1000);
        assertThat(List.of(a, b, c)).as(where)
                .allMatch(booked -> booked.decision().outcome() == Decision.Outcome.ALLOWED);
        assertThat(c.decision().retryAfter()).as(where + ": C queues behind A and B").isEqualTo(seconds(waits[2]));

        store.giveBack(caller, List.of(limit), c).toCompletableFuture().join();
        RateLimitStore.Booking d = book(store, caller, limit, 1000);
        assertThat(d.decision().retryAfter()).as(where + ": C's slot, given up, is D's").isEqualTo(seconds(waits[2]));

        store.giveBack(caller, List.of(limit), b).toCompletableFuture().join();
        Decision next = reserve(store, caller, limit, 1000);
        assertThat(next.retryAfter()).as(where + ": B given up behind D").isEqualTo(seconds(waits[3]));
        if (algorithm.hasBurst()) {
            assertThat(reserve(store, caller, limit, 1000).retryAfter()).as(where + ": B's slot is taken once; "
                    + "the next goes after D").isEqualTo(seconds(80));
        }
        assertThat(a.decision().retryAfter()).as(where).isEqualTo(seconds(waits[0]));
        assertThat(b.decision().retryAfter()).as(where).isEqualTo(seconds(waits[1]));
    }

    /**
     * Slots given up anywhere in the schedule come back: eight waiters on a limit of one call a
     * second (burst 1) hold the slots at 1 to 8 s behind a first call at 0 s; at 2.5 s on the
     * store's clock they all give up, in the order they booked, the first three by cancelling
     * their stage, the next three interrupted in {@code acquire}, the last two by an
     * {@code orTimeout} on their stage. The next caller gets the earliest given-up slot still ahead, 3 s, about
     * one second away, rather than queueing behind the given-up ones; seven more get 4 s, 5 s and
     * on. Asserted on the store's granted slots (its clock when booked plus the wait it answered),
     * never on the wall clock: every slot granted and kept is at least a second from any other.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("buckets")
    void slotsGivenUpAnywhereInTheScheduleGoToTheNextCallers(Algorithm algorithm) throws Exception {
        ManualClock clock = new ManualClock();
        RecordingStore store = new RecordingStore(newStore(clock), clock);
        Limit limit = Limit.of("given-up", 1, Duration.ofSeconds(1)).withBurst(1).withAlgorithm(algorithm);
        RateLimiter limiter = RateLimiter.builder().limit(limit).store(store).timeout(PATIENT).build();
        String caller = "given-up-" + UUID.randomUUID();
        String where = algorithm + " on " + storeName();
        Duration patient = Duration.ofSeconds(30);
        long start = clock.nowMicros();
        assertThat(limiter.acquire(caller, Duration.ZERO).retryAfter()).as(where + ": the first call").isZero();

        List<CompletableFuture<Decision>> stages = new ArrayList<>();
        List<Thread> sleepers = new ArrayList<>();
        List<Throwable> thrown = Collections.synchronizedList(new ArrayList<>());
        for (int i = 1; i <= 8; i++) {
            if (i >= 4 && i <= 6) {
                Thread sleeper = new Thread(() -> {
                    try {
                        limiter.acquire(caller, patient);
                    } catch (Throwable e) {
                        thrown.add(e);
                    }
                });
                sleeper.start();
                sleepers.add(sleeper);
            } else {
                // the last two get their orTimeout when they give up, so that none goes before all are booked
                stages.add(limiter.acquireAsync(caller, patient));
            }
            store.awaitBookings(1 + i); // in order: waiter i holds the slot at i seconds
        }
        assertThat(store.slots()).as(where + ": booked").containsExactly(start, start + 1_000_000, start + 2_000_000,
                start + 3_000_000, start + 4_000_000, start + 5_000_000, start + 6_000_000, start + 7_000_000,
                start + 8_000_000);

        clock.advance(Duration.ofMillis(2_500));
        for (int i = 0; i < 3; i++) {
            assertThat(stages.get(i).cancel(false)).as(where + ": waiter %d cancels", i + 1).isTrue();
            store.awaitGivenBack(i + 1);
        }
        for (Thread sleeper : sleepers) {
            awaitSleeping(sleeper);
            sleeper.interrupt();
            sleeper.join(PATIENT.toMillis());
        }
        assertThat(thrown).as(where + ": the interrupted waiters").hasSize(3)
                .allMatch(e -> e instanceof InterruptedException);
        for (int i = 3; i < 5; i++) {
            stages.get(i).orTimeout(10, TimeUnit.MILLISECONDS);
            assertThat(stages.get(i)).as(where + ": waiter %d times out", i + 4).failsWithin(PATIENT);
            store.awaitGivenBack(i + 4);
        }

        List<Long> granted = new ArrayList<>(List.of(start));
        List<CompletableFuture<Decision>> next = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                next.add(limiter.acquireAsync(caller, patient));
                store.awaitBookings(10 + i);
                long slot = store.slots().get(9 + i);
                if (i == 0) {
                    assertThat(slot - clock.nowMicros()).as(where + ": the next caller's wait, in store microseconds, "
                            + "after eight slots were given up at 2.5 s").isLessThanOrEqualTo(1_000_000);
                }
                granted.add(slot);
            }
        } finally {
            next.forEach(stage -> stage.cancel(false)); // their timers go with them
        }
        assertThat(granted).as(where + ": the slots given up and still ahead, in order, then the schedule's")
                .containsExactly(start, start + 3_000_000, start + 4_000_000, start + 5_000_000, start + 6_000_000,
                        start + 7_000_000, start + 8_000_000, start + 9_000_000, start + 10_000_000);
        assertSpacedApart(granted, 1_000_000, where);
    }

    /**
     * A reservation that waited for nothing, given up: the unit comes back while nothing is
     * booked after it, as for one ahead; a booking no store made ({@code NOWHERE}) gives back nothing.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("everyAlgorithm")
    void aReservationGivenUpAtOnceReturnsItsUnitWhileItIsTheLast(Algorithm algorithm) {
        ManualClock clock = new ManualClock();
        RateLimitStore store = newStore(clock);
        Limit limit = FIVE.withAlgorithm(algorithm);
        String caller = "give-back-now-" + UUID.randomUUID();
        String where = algorithm + " on " + storeName();
        for (int i = 0; i < 4; i++) {
            book(store, caller, limit, 0);
        }
        RateLimitStore.Booking fifth = book(store, caller, limit, 0);
        assertThat(fifth.decision().retryAfter()).as(where).isZero();
        RateLimitStore.Booking nowhere = new RateLimitStore.Booking(fifth.decision(), RateLimitStore.Booking.NOWHERE);
        store.giveBack(caller, List.of(limit), nowhere).toCompletableFuture().join();
        assertThat(reserve(store, caller, limit, 0).outcome()).as(where + ": nothing comes back without the ends")
                .isEqualTo(Decision.Outcome.REJECTED);
        store.giveBack(caller, List.of(limit), fifth).toCompletableFuture().join();
        Decision again = reserve(store, caller, limit, 0);
        assertThat(again.outcome()).as(where + ": the fifth's unit, given back").isEqualTo(Decision.Outcome.ALLOWED);
        assertThat(again.remaining()).as(where).isZero();
        assertThat(reserve(store, caller, limit, 0).outcome()).as(where + ": one unit only")
                .isEqualTo(Decision.Outcome.REJECTED);
    }

    /** Waits until {@code thread} sleeps (for its slot), at most {@link #PATIENT}. */
    private static void awaitSleeping(Thread thread) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENT.toNanos();
        while (thread.getState() != Thread.State.TIMED_WAITING && thread.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
    }

    /** Asserts that no two of {@code slots} (store microseconds) are closer than {@code apart}. */
    static void assertSpacedApart(List<Long> slots, long apart, String where) {
        List<Long> sorted = new ArrayList<>(slots);
        sorted.sort(null);
        for (int i = 1; i < sorted.size(); i++) {
            assertThat(sorted.get(i) - sorted.get(i - 1)).as(where + ": slots granted at %s (store microseconds), "
                    + "apart by at least %d", sorted, apart).isGreaterThanOrEqualTo(apart);
        }
    }

    /**
     * A store that records each booking's granted slot, as the store's own clock puts it (its time
     * when booking, plus the wait it answered), and counts the give-backs it has completed.
     */
    static final class RecordingStore implements RateLimitStore {
        private final RateLimitStore store;
        private final TimeSource clock;
        private final List<Long> slots = new ArrayList<>();
        private int givenBack;

        RecordingStore(RateLimitStore store, TimeSource clock) {
            this.store = store;
            this.clock = clock;
        }

        @Override
        public CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
            long now = clock.nowMicros();
            return store.book(caller, limits, maxWait).thenApply(booking -> {
                if (booking.decision().outcome() == Decision.Outcome.ALLOWED) {
                    synchronized (this) {
                        slots.add(now + booking.decision().retryAfter().toNanos() / 1_000);
                        notifyAll();
                    }
                }
                return booking;
            });
        }

        @Override
        public CompletionStage<Void> giveBack(String caller, List<Limit> limits, Booking booking) {
            return store.giveBack(caller, limits, booking).thenRun(() -> {
                synchronized (this) {
                    givenBack++;
                    notifyAll();
                }
            });
        }

        @Override
        public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
            return store.decide(caller, limits);
        }

        @Override
        public CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
            return book(caller, limits, maxWait).thenApply(Booking::decision);
        }

        /** The slots granted so far, in the order they were booked. */
        synchronized List<Long> slots() {
            return List.copyOf(slots);
        }

        synchronized void awaitBookings(int n) throws InterruptedException {
            long deadline = System.nanoTime() + PATIENT.toNanos();
            while (slots.size() < n && System.nanoTime() < deadline) {
                wait(10);
            }
            assertThat(slots).as("bookings granted").hasSizeGreaterThanOrEqualTo(n);
        }

        synchronized void awaitGivenBack(int n) throws InterruptedException {
            long deadline = System.nanoTime() + PATIENT.toNanos();
            while (givenBack < n && System.nanoTime() < deadline) {
                wait(10);
            }
            assertThat(givenBack).as("give-backs done").isGreaterThanOrEqualTo(n);
        }

        @Override
        public void close() {
            store.close();
        }
    }
}
