package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Waits for a slot of a limiter and hands the call over only on time: at most
 * {@code maxLateness} after its slot. A waiter back later (the store's answer came back slowly,
 * its thread or timer woke late, the JVM paused) does not send: its slot passes unused, being in
 * the past where nobody else can use it, and it reserves a new one within what is left of its
 * wait.
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
 */
final class OnTime {

    private final RateLimiter limiter;
    private final Duration maxLateness;
    private final long maxLatenessNanos;
    private final LongSupplier nanoClock;

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
     * One permit of {@code key}, sent on time, waiting at most {@code maxWait} in all.
     *
     * @throws PermitUnavailableException if every slot came late until the wait ran out
     */
    Decision acquire(String key, Duration maxWait) throws InterruptedException {
        long started = nanoClock.getAsLong();
        Duration left = maxWait;
        while (true) {
            long asked = nanoClock.getAsLong();
            Decision decision = limiter.acquire(key, left);
            long late = lateness(decision, asked);
            if (late <= maxLatenessNanos) {
                return decision;
            }
            left = left(started, maxWait);
            if (left == null) {
                throw late(key, decision, late);
            }
        }
    }

    /**
     * As {@link #acquire} without blocking a thread; a stage completed otherwise first
     * (cancelled, timed out) cancels the reservation it waits on, which sends nothing.
     */
    CompletableFuture<Decision> acquireAsync(String key, Duration maxWait) {
        CompletableFuture<Decision> result = new CompletableFuture<>();
        AtomicReference<CompletableFuture<Decision>> current = new AtomicReference<>();
        reserve(result, current, key, maxWait, nanoClock.getAsLong(), maxWait);
        result.whenComplete((decision, failure) -> current.get().cancel(false));
        return result;
    }

    private void reserve(CompletableFuture<Decision> result, AtomicReference<CompletableFuture<Decision>> current,
                         String key, Duration maxWait, long started, Duration left) {
        long asked = nanoClock.getAsLong();
        CompletableFuture<Decision> reserved = limiter.acquireAsync(key, left);
        current.set(reserved);
        // given up while reserving: the check after the set sees it, or the caller's cancel sees reserved
        if (result.isDone()) {
            reserved.cancel(false);
            return;
        }
        reserved.whenComplete((decision, failure) -> {
            if (failure != null) {
                result.completeExceptionally(failure);
                return;
            }
            long late = lateness(decision, asked);
            if (late <= maxLatenessNanos) {
                result.complete(decision);
                return;
            }
            Duration rest = left(started, maxWait);
            if (rest == null) {
                result.completeExceptionally(late(key, decision, late));
            } else if (!result.isDone()) {
                reserve(result, current, key, maxWait, started, rest);
            }
        });
    }

    /**
     * How late after its slot a decision came back, at most: from when it was asked plus the wait
     * it reserved. Only a reserved slot can be late; any other decision (refused, failed open)
     * counts as on time.
     */
    private long lateness(Decision decision, long askedNanos) {
        Decision.Outcome outcome = decision.outcome();
        if (outcome != Decision.Outcome.ALLOWED && outcome != Decision.Outcome.LOCAL_ALLOWED) {
            return Long.MIN_VALUE;
        }
        return nanoClock.getAsLong() - askedNanos - decision.retryAfter().toNanos();
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
