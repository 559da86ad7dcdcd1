package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;

import dev.sluice.internal.Timeouts;
import dev.sluice.outbound.WaitingLine.Rebooking;
import dev.sluice.outbound.WaitingLine.Slot;
import dev.sluice.outbound.WaitingLine.Waiter;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Waits for a slot of a limiter and hands the call over only on time: at most
 * {@code maxLateness} after its slot. A waiter back later (the store's answer came back slowly,
 * its thread or timer woke late, the JVM paused) does not send on that slot: it passes unused,
 * being in the past where nobody else can use it. The waiter keeps its place in line instead:
 * the next on-time slot of the same key on this instance that went to a call which asked after it
 * is handed down to it, and that call, in turn, takes the next one, and so on down the line.
 *
 * <p>Why: a provider counts calls when they arrive. A limit of {@code r} per second, burst 1,
 * grants slots {@code 1/r} apart, so eleven consecutive slots span {@code 10/r}; a call late by
 * more than {@code 10/r - 1 s} beside on-time ones puts eleven calls in one second of a provider
 * that allows ten.
 *
 * <p>How late: the store reads its clock somewhere between the reservation's sending and its
 * answer's arrival, so on this JVM's clock the slot lies between {@code sent + wait} and
 * {@code answered + wait}. The limiter sleeps until {@code answered + wait}, never before the
 * slot (waking at {@code sent + wait} would be early by the trip to the store, and early calls
 * crowd the ones before them as late ones crowd the ones after). The lateness is counted from
 * {@code sent + wait}: an upper bound, which includes the store's round trip.
 *
 * <p><b>Keeping its place.</b> Going to the back of the queue cost a late waiter more than its
 * lateness: under load its new slot lay a whole backlog ahead, often beyond what was left of its
 * wait, and the call failed (three instances of eight threads at 9/s on a loaded machine failed
 * 11 to 13 calls a run). Sending the late waiter "now" instead is not possible under the promise:
 * while calls queue, every slot of the store's schedule from now to its end is granted to a waiter
 * that sends at it without asking the store again, so any instant before the end lies closer than
 * one interval to a granted slot, and taking one of those slots would put two calls in it. The
 * only slots a late waiter can take without breaking the promise are ones already granted whose
 * holder lets them go. So: every call takes a place when it first asks ({@link WaitingLine}); a
 * call whose slot came back late joins this instance's line for the key and books a new slot
 * (the store's given-back slots first, then the schedule's end) within what is left of its wait;
 * a call whose slot came on time gives it to the earliest call in line that asked before it, if
 * any, and joins the line itself, taking over that call's booking in flight (booking anew only if
 * it had none, or its answer has come, or it was refused within the shorter wait it was made
 * for). A call in line goes on whichever comes first: a slot handed down, or its booking's (whose
 * slot, if it is then not needed, goes to the next in line, or its booking back to the store); with
 * its booking refused it waits for one handed down until its wait runs out. So one late slot
 * costs one booking, however far down the line it is handed, and the line empties when that
 * booking's slot comes. The line only reorders who sends on the slots the store granted: every
 * call still goes on a slot of the store's schedule, one call per slot, at most
 * {@code maxLateness} after it (a slot handed down is checked again by the call taking it, on the
 * same clock), so no two calls come closer than the store's own times allow. What it costs: the
 * late slot still passes unused; a slot handed to a blocked thread waits for that thread to wake,
 * which on a loaded machine can make it late where its holder would have sent it on time (it then
 * passes unused too); and the place is kept among this instance's calls only: a call of another
 * instance has no way to hear of a late waiter here without a round trip of its own at every
 * slot, so calls of other instances that asked later may still go first. Calls of each priority
 * have a line of their own ({@link #apart()}): a low-priority call back late never takes a
 * high-priority call's slot.
 */
final class OnTime {

    private final RateLimiter limiter;
    private final Duration maxLateness;
    private final long maxLatenessNanos;
    private final LongSupplier nanoClock;
    private final WaitingLine line = new WaitingLine();

    /**
     * The shortest default lateness bound: the lateness counts the store's round trip and a
     * thread's or timer's wake-up, which on a busy machine alone take milliseconds. With a bound of
     * 1 ms at 2,000/s, 16 threads waiting on one key on 2 cores sent 0.54 of the rate: nearly
     * every slot came back "late" and passed unused (benchmark run of 2026-12-01).
     */
    static final Duration SHORTEST_DEFAULT_LATENESS = Duration.ofMillis(20);

    /**
     * @param maxLateness {@code null}: half the shortest interval between slots of the limiter's
     *                    limits (period over count), at least {@link #SHORTEST_DEFAULT_LATENESS}:
     *                    55 ms at {@code 9/s}, 20 ms from {@code 25/s} up. A limit at least one call
     *                    per period below a provider's strict limit leaves a margin of at least one
     *                    interval, so up to {@code 25/s} this takes at most half of it.
     * @throws IllegalArgumentException if {@code maxLateness} is below 1 ms or above 1 hour
     */
    OnTime(RateLimiter limiter, Duration maxLateness, LongSupplier nanoClock) {
        if (maxLateness == null) {
            Duration half = limiter.limits().stream().map(limit -> limit.period().dividedBy(limit.count()))
                    .min(Duration::compareTo).orElseThrow().dividedBy(2);
            maxLateness = half.compareTo(SHORTEST_DEFAULT_LATENESS) < 0 ? SHORTEST_DEFAULT_LATENESS : half;
        } else if (maxLateness.compareTo(Duration.ofMillis(1)) < 0
                || maxLateness.compareTo(RateLimiter.LONGEST_WAIT) > 0) {
            throw new IllegalArgumentException("'maxLateness' must be from 1 ms to 1h (e.g. Duration.ofMillis(50)), "
                    + "got '" + maxLateness + "'");
        }
        this.limiter = limiter;
        this.maxLateness = maxLateness;
        this.maxLatenessNanos = maxLateness.toNanos();
        this.nanoClock = nanoClock;
    }

    Duration maxLateness() {
        return maxLateness;
    }

    /**
     * The same bound and clock with a line of its own: for calls of another priority, which must
     * not take this line's slots.
     */
    OnTime apart() {
        return new OnTime(limiter, maxLateness, nanoClock);
    }

    /**
     * One permit of {@code key}, sent on time, waiting at most {@code maxWait} in all.
     *
     * @throws PermitUnavailableException if no slot came on time within the wait
     */
    Decision acquire(String key, Duration maxWait) throws InterruptedException {
        Call call = new Call(key, maxWait);
        long asked = nanoClock.getAsLong();
        Slot slot = slot(limiter.acquire(key, maxWait), asked);
        while (true) {
            Decision go = call.use(slot);
            if (go != null) {
                return go;
            }
            Duration left = left(call.started, maxWait);
            if (left == null) {
                call.dropInherited();
                throw call.failure(null);
            }
            Waiter waiter = call.waitInLine(left);
            try {
                slot = waiter.slot.get();
            } catch (InterruptedException e) {
                // its booking is given back; a slot that came just now goes on down the line
                if (!waiter.slot.cancel(false)) {
                    Slot came = waiter.slot.getNow(null);
                    if (came != null) {
                        call.passOn(came);
                    }
                }
                throw e;
            } catch (ExecutionException e) {
                if (e.getCause() instanceof TimeoutException) {
                    throw call.failure(waiter.refused);
                }
                throw e.getCause() instanceof RuntimeException r ? r : new CompletionException(e.getCause());
            }
        }
    }

    /**
     * As {@link #acquire} without blocking a thread; a stage completed otherwise first
     * (cancelled, timed out) cancels the reservation it waits on, which sends nothing, and leaves
     * the line.
     */
    CompletableFuture<Decision> acquireAsync(String key, Duration maxWait) {
        Call call = new Call(key, maxWait);
        CompletableFuture<Decision> result = new CompletableFuture<>();
        long asked = nanoClock.getAsLong();
        CompletableFuture<Decision> first = limiter.acquireAsync(key, maxWait);
        AtomicReference<CompletableFuture<?>> current = new AtomicReference<>(first);
        first.whenComplete((decision, failure) -> {
            if (failure != null) {
                result.completeExceptionally(failure);
            } else {
                next(result, current, call, slot(decision, asked));
            }
        });
        result.whenComplete((decision, failure) -> current.get().cancel(false));
        return result;
    }

    private void next(CompletableFuture<Decision> result, AtomicReference<CompletableFuture<?>> current, Call call,
                      Slot slot) {
        if (result.isDone()) {
            call.passOn(slot); // given up as its slot came
            return;
        }
        Decision go = call.use(slot);
        if (go != null) {
            if (!result.complete(go)) {
                call.passOn(slot);
            }
            return;
        }
        Duration left = left(call.started, call.maxWait);
        if (left == null) {
            call.dropInherited();
            result.completeExceptionally(call.failure(null));
            return;
        }
        Waiter waiter = call.waitInLine(left);
        current.set(waiter.slot);
        // given up meanwhile: the check after the set sees it, or the caller's cancel sees the waiter;
        // a slot that reached the waiter first goes on down the line (next, the result being done)
        if (result.isDone()) {
            waiter.slot.cancel(false);
        }
        waiter.slot.whenComplete((handed, failure) -> {
            if (failure == null) {
                next(result, current, call, handed);
            } else if (failure instanceof TimeoutException) {
                result.completeExceptionally(call.failure(waiter.refused));
            } else {
                result.completeExceptionally(failure);
            }
        });
    }

    /** A decision as a slot in hand: due at most its wait after {@code askedNanos}, when it was asked for. */
    private static Slot slot(Decision decision, long askedNanos) {
        return new Slot(decision, askedNanos + decision.retryAfter().toNanos());
    }

    /** Only a reserved slot can be late, or be handed down; any other decision (refused, failed open) cannot. */
    private static boolean reserved(Decision decision) {
        Decision.Outcome outcome = decision.outcome();
        return outcome == Decision.Outcome.ALLOWED || outcome == Decision.Outcome.LOCAL_ALLOWED;
    }

    /** One call for a permit: its key, its place in line, its wait, and the last slot it let go. */
    private final class Call {
        final String key;
        final Duration maxWait;
        final long started = nanoClock.getAsLong();
        final long place = line.place();
        /** The last slot it let go, and how late after it: above the bound, late; else handed down. */
        private volatile Decision last;
        private volatile long lastLate;
        /** The booking in flight of the call it handed its slot to, which it takes over; {@code null}: none. */
        private volatile Rebooking inherited;

        Call(String key, Duration maxWait) {
            this.key = key;
            this.maxWait = maxWait;
        }

        /**
         * The decision to go with, or {@code null} when the call needs another slot: its slot came
         * back too late, or came on time and went to an earlier call in line (whose booking in
         * flight, if any, it takes over).
         */
        Decision use(Slot slot) {
            Decision decision = slot.decision();
            if (!reserved(decision)) {
                return decision;
            }
            long late = nanoClock.getAsLong() - slot.dueNanos();
            if (late <= maxLatenessNanos) {
                Rebooking left = line.handDown(key, place, slot);
                if (left == null) {
                    return decision;
                }
                inherited = left == Rebooking.NONE ? null : left;
            }
            last = decision;
            lastLate = late;
            return null;
        }

        /** A slot this call no longer needs: an on-time one goes to whichever call waits first, else it passes. */
        void passOn(Slot slot) {
            if (reserved(slot.decision()) && nanoClock.getAsLong() - slot.dueNanos() <= maxLatenessNanos) {
                drop(line.handDown(key, Long.MAX_VALUE, slot));
            }
        }

        /** Gives back the booking taken over, the call's wait having ended without it. */
        void dropInherited() {
            Rebooking booking = inherited;
            inherited = null;
            drop(booking);
        }

        private static void drop(Rebooking booking) {
            if (booking != null) {
                booking.reserved.cancel(false); // gives it back, unless its answer came (then it went on)
            }
        }

        /**
         * Joins the line with a booking in flight within {@code left}: the one taken over if it
         * still waits for its answer, else a new one. The waiter's slot completes with whichever
         * comes first: a slot handed down, or the booking's (granted, or a failure mode's answer).
         * Its booking refused, it waits on for a slot handed down until {@code left} has passed; in
         * any case it stops {@code maxLateness} later, when even its booking's slot could no
         * longer come on time: a {@link TimeoutException}. On completion it leaves the line and
         * cancels the booking it still holds, which gives it back unless its slot came.
         */
        Waiter waitInLine(Duration left) {
            Waiter waiter = new Waiter(place, started + maxWait.toNanos());
            Rebooking booking = inherited;
            inherited = null;
            if (booking == null || !booking.passTo(waiter)) {
                drop(booking);
                booking = book(waiter, left);
            }
            waiter.booking.set(booking);
            line.join(key, waiter);
            ScheduledFuture<?> waitEnds = Timeouts.after(() -> {
                waiter.expired = true;
                if (waiter.refused != null) {
                    waiter.slot.completeExceptionally(new TimeoutException());
                }
            }, left.toNanos());
            ScheduledFuture<?> lastChance = Timeouts.after(
                    () -> waiter.slot.completeExceptionally(new TimeoutException()), left.toNanos() + maxLatenessNanos);
            waiter.slot.whenComplete((slot, failure) -> {
                line.leave(key, waiter);
                drop(waiter.booking.getAndSet(null));
                waitEnds.cancel(false);
                lastChance.cancel(false);
            });
            return waiter;
        }

        private Rebooking book(Waiter waiter, Duration left) {
            long asked = nanoClock.getAsLong();
            CompletableFuture<Decision> reserved = limiter.acquireAsync(key, left);
            Rebooking booking = new Rebooking(reserved, asked, waiter);
            reserved.whenComplete((decision, failure) -> answered(booking, decision, failure));
            return booking;
        }

        /** A booking's answer, for the call that holds it now; a slot it no longer needs is passed on. */
        private void answered(Rebooking booking, Decision decision, Throwable failure) {
            Waiter waiter = booking.answered();
            if (failure != null) {
                waiter.slot.completeExceptionally(failure);
                return;
            }
            Decision.Outcome outcome = decision.outcome();
            if (outcome == Decision.Outcome.REJECTED || outcome == Decision.Outcome.LOCAL_REJECTED) {
                long left = waiter.endsNanos - nanoClock.getAsLong();
                if (waiter != booking.madeFor && left > 0) {
                    // refused within the wait of the call it was made for: its new owner may wait longer
                    Rebooking fresh = book(waiter, Duration.ofNanos(left));
                    if (!waiter.booking.compareAndSet(booking, fresh)) {
                        drop(fresh);
                    }
                    return;
                }
                waiter.refused = decision;
                if (waiter.expired) {
                    waiter.slot.completeExceptionally(new TimeoutException());
                }
                return;
            }
            Slot slot = slot(decision, booking.askedNanos);
            if (!waiter.slot.complete(slot)) {
                passOn(slot); // a slot was handed down first
            }
        }

        /** Why the call gets no permit, its wait having run out: its own booking's refusal if any. */
        PermitUnavailableException failure(Decision refused) {
            if (refused != null) {
                return new PermitUnavailableException(key, maxWait, refused);
            }
            if (lastLate > maxLatenessNanos) {
                return late(key, last, lastLate);
            }
            return new PermitUnavailableException(key, maxWait,
                    new Decision(Decision.Outcome.REJECTED, last.quotas(), Duration.ZERO));
        }
    }

    /** What is left of {@code maxWait}; {@code null} once it has run out. */
    private Duration left(long startedNanos, Duration maxWait) {
        long left = maxWait.toNanos() - (nanoClock.getAsLong() - startedNanos);
        return left <= 0 ? null : Duration.ofNanos(left);
    }

    private PermitUnavailableException late(String key, Decision last, long lateNanos) {
        return PermitUnavailableException.late(key, last, Duration.ofNanos(lateNanos), maxLateness);
    }

    @Override
    public String toString() {
        return "sending at most " + maxLateness.toMillis() + " ms after its slot";
    }
}
