package dev.sluice;

import dev.sluice.internal.Timeouts;
import dev.sluice.spi.RateLimitStore;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A limiter's reservations: {@link RateLimiter#acquire} and {@link RateLimiter#acquireAsync}, the
 * waiting form of a decision, for the calls an application makes to a rate-limited provider.
 *
 * <p><b>The reservation schedule.</b> Calls of many instances share one provider's quota, so the
 * queue lives in the store, not in a JVM: a waiter books its slot in one atomic round trip
 * ({@link RateLimitStore#book}), spends its units at once, and then only waits. Waiters are served
 * in the order they reach the store, with no retries and no polling. Booking writes each limit
 * ahead of time: a token bucket or GCRA goes into debt (its theoretical arrival time, the
 * schedule's end, moves past now and is paid off at the limit's rate); a window books a later
 * window; a sliding log cannot wait (entries stamped ahead would trim ones that still count now),
 * so it reserves only what it has now. All limits of one reservation are booked at one instant,
 * the latest any of them needs.
 *
 * <p><b>Handing over.</b> The store answers with the wait until the slot. A blocking waiter sleeps
 * from the answer's arrival, later than the store's slot and never earlier; an asynchronous one is
 * completed by Sluice's timer, on the limiter's executor, and no thread sleeps. The slot is the
 * waiter's to use; whether a waiter back late still sends is the outbound clients' rule, not this
 * class's ({@code dev.sluice.outbound.Permits}).
 *
 * <p><b>Giving back.</b> A waiter that gives up before its slot (interrupted, its stage cancelled
 * or completed otherwise) returns its booking, once, and only a granted one: sending nothing, it
 * must not cost the calls behind it a slot. So does a booking that reached this JVM after the
 * limiter stopped waiting for it (the timeout; the failure mode answered instead), which reserved a
 * slot for no one. The store returns a slot where that gives no two calls one slot
 * ({@link RateLimitStore#giveBack} is the contract): a bucket whose schedule still ends at this
 * booking moves its end back, exactly; behind later bookings, the store keeps the slot and the
 * next reservation takes the earliest kept one before it extends the schedule; a window lowers
 * its booked window's count. A blocking waiter returns it waiting at most the timeout; a stage
 * completed on some other thread sends it and goes.
 *
 * <p><b>Without the store.</b> The failure mode answers as for decisions, on a circuit of its own:
 * {@code open} goes at once, {@code closed} refuses, {@code local} books in this JVM's local
 * limiter, which gives back the same way. The store's booking is kept apart from the local one:
 * it may arrive after the local limiter answered, and only the one the waiter was granted is its
 * to give back.
 */
final class Reservations {

    private final StoreResilience<Reservation, Decision> resilience;
    private final ShadowAndListener shadowAndListener;
    /** The limiter of {@link FailureMode#LOCAL}; {@code null} for the other modes. */
    private final LocalLimiter local;
    private final Refunds refunds;
    private final LimiterSettings settings;

    Reservations(LimiterSettings settings, String policies, LocalLimiter local, Refunds refunds,
                 ShadowAndListener shadowAndListener) {
        this.settings = settings;
        this.local = local;
        this.refunds = refunds;
        this.shadowAndListener = shadowAndListener;
        StoreResilience.Fallback<Reservation, Decision> locally = local == null ? null : (caller, reservation) ->
                reservation.bookedLocally(local.book(caller, reservation.limits(), reservation.ahead()));
        this.resilience = new StoreResilience<>(
                (caller, reservation, deadlineNanos, probe) -> book(settings.store(), caller, reservation),
                StoreResilience.failing(settings.failureMode(), locally),
                settings, "reservations of policies " + policies, shadowAndListener);
    }

    /** Books {@code request} at most {@code maxWait} ahead, sleeps until its slot; see {@link RateLimiter#acquire}. */
    Decision await(String caller, List<Limit> request, Duration maxWait) throws InterruptedException {
        long started = System.nanoTime();
        Reservation asked = new Reservation(request, maxWait);
        Decision answered = resilience.await(caller, asked, started);
        if (Thread.interrupted()) {
            // Interrupted while the store booked: nothing is granted, and what was booked goes back,
            // now, or when the store's late answer comes (book).
            giveBackAnything(caller, asked);
            throw new InterruptedException("interrupted while reserving a slot");
        }
        Decision decision = shadowAndListener.apply(answered, started);
        long wait = waitNanos(decision);
        if (wait > 0) {
            long until = System.nanoTime() + wait;
            try {
                for (long left = wait; left > 0; left = until - System.nanoTime()) {
                    TimeUnit.NANOSECONDS.sleep(left);
                }
            } catch (InterruptedException e) {
                giveBack(caller, asked, decision, true);
                throw e;
            }
        }
        return decision;
    }

    /** As {@link #await} without blocking a thread; see {@link RateLimiter#acquireAsync}. */
    CompletableFuture<Decision> later(String caller, List<Limit> request, Duration maxWait) {
        long started = System.nanoTime();
        CompletableFuture<Decision> result = new CompletableFuture<>();
        Reservation asked = new Reservation(request, maxWait);
        Decision atOnce = resilience.ask(caller, asked, started,
                decision -> grantLater(result, caller, asked, shadowAndListener.apply(decision, started)));
        if (atOnce != null) {
            grantLater(result, caller, asked, shadowAndListener.apply(atOnce, started));
        }
        return result;
    }

    /** How long a decision still has to wait for its slot: only a granted one waits. */
    private static long waitNanos(Decision decision) {
        return granted(decision) ? decision.retryAfter().toNanos() : 0;
    }

    private static boolean granted(Decision decision) {
        return decision.outcome() == Decision.Outcome.ALLOWED || decision.outcome() == Decision.Outcome.LOCAL_ALLOWED;
    }

    /**
     * Completes {@code result} with {@code decision} once its slot comes, on the executor; a stage
     * completed otherwise first gives its granted reservation back.
     */
    private void grantLater(CompletableFuture<Decision> result, String caller, Reservation asked, Decision decision) {
        if (granted(decision)) {
            result.whenComplete((value, failure) -> {
                if (value != decision) {
                    giveBack(caller, asked, decision, false);
                }
            });
        }
        Runnable complete = () -> {
            try {
                settings.executor().execute(() -> result.complete(decision));
            } catch (RejectedExecutionException e) {
                result.complete(decision);
            }
        };
        long wait = waitNanos(decision);
        if (wait <= 0) {
            complete.run();
            return;
        }
        ScheduledFuture<?> timer = Timeouts.after(complete, wait);
        result.whenComplete((value, failure) -> timer.cancel(false));
    }

    /** The store's booking of {@code asked}, as the decision it gives; one that comes too late is given back. */
    private CompletableFuture<Decision> book(RateLimitStore store, String caller, Reservation asked) {
        CompletableFuture<Decision> answer = new CompletableFuture<>();
        store.book(caller, asked.limits(), asked.ahead()).whenComplete((booking, failure) -> {
            if (failure != null) {
                answer.completeExceptionally(failure);
            } else if (!answer.complete(asked.booked(booking))) {
                giveBackStored(caller, asked); // on the store's thread: send and go
            }
        });
        return answer;
    }

    /**
     * Returns the booking behind {@code decision} to whoever made it, the store or the local
     * limiter. {@code mayBlock}: wait for the store at most the timeout; else send and go.
     */
    private void giveBack(String caller, Reservation asked, Decision decision, boolean mayBlock) {
        boolean locally = decision.outcome() == Decision.Outcome.LOCAL_ALLOWED;
        RateLimitStore.Booking booking = asked.take(locally, decision);
        if (booking == null) {
            return; // not what the store booked (a failure mode's answer, which reserved nothing), or given back
        }
        if (locally) {
            local.giveBack(caller, asked.limits(), booking);
        } else if (mayBlock) {
            refunds.giveBack(caller, asked.limits(), booking);
        } else {
            refunds.giveBackLater(caller, asked.limits(), booking);
        }
    }

    /**
     * Returns whatever the store and the local limiter booked for {@code asked}, whose caller was
     * interrupted before it was granted anything. Sends and goes.
     */
    private void giveBackAnything(String caller, Reservation asked) {
        giveBackStored(caller, asked);
        RateLimitStore.Booking local = asked.take(true, null);
        if (local != null && local.decision().outcome() == Decision.Outcome.LOCAL_ALLOWED) {
            this.local.giveBack(caller, asked.limits(), local);
        }
    }

    /**
     * Returns what the store booked for {@code asked} and nobody was granted: for a caller
     * interrupted, or a booking that came after its caller stopped waiting. Sends and goes; the
     * booking goes back once, whichever of the two comes first.
     */
    private void giveBackStored(String caller, Reservation asked) {
        RateLimitStore.Booking stored = asked.take(false, null);
        if (stored != null && stored.decision().outcome() == Decision.Outcome.ALLOWED) {
            refunds.giveBackLater(caller, asked.limits(), stored);
        }
    }

    /**
     * What a reservation asks of the store: these limits, reserved at most {@code ahead}; and,
     * once the store or the local limiter has answered, what each booked, for {@link #giveBack}.
     */
    static final class Reservation {
        private final List<Limit> limits;
        private final Duration ahead;
        private final AtomicReference<RateLimitStore.Booking> booking = new AtomicReference<>();
        private final AtomicReference<RateLimitStore.Booking> localBooking = new AtomicReference<>();

        Reservation(List<Limit> limits, Duration ahead) {
            this.limits = limits;
            this.ahead = ahead;
        }

        List<Limit> limits() {
            return limits;
        }

        Duration ahead() {
            return ahead;
        }

        /** Keeps what the store booked; its decision. */
        Decision booked(RateLimitStore.Booking booked) {
            this.booking.set(booked);
            return booked.decision();
        }

        /** Keeps what the local limiter booked; its decision. */
        Decision bookedLocally(RateLimitStore.Booking booked) {
            this.localBooking.set(booked);
            return booked.decision();
        }

        /**
         * Takes what the store ({@code locally}: the local limiter) booked, to give it back: once,
         * and, given a {@code decision}, only the booking behind it; {@code null} if none.
         */
        RateLimitStore.Booking take(boolean locally, Decision decision) {
            AtomicReference<RateLimitStore.Booking> kept = locally ? localBooking : booking;
            RateLimitStore.Booking taken = kept.get();
            if (taken == null || (decision != null && taken.decision() != decision)) {
                return null;
            }
            return kept.compareAndSet(taken, null) ? taken : null;
        }
    }
}
