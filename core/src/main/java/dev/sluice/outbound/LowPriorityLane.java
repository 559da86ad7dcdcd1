package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The lane of {@link Priority#LOW} calls: each of the shared limiter's limits scaled by one minus
 * the high-priority share, rounded down. A low-priority call waits for its slot in the lane first
 * and books the shared limiter only once that slot has come, in a second reservation. Booking both
 * in one reservation would not do: the store writes every limit of a reservation as of its slot,
 * so a backlog booked minutes ahead in the lane would push the shared limit's schedule minutes
 * ahead too, and a high-priority call would queue behind all of it. Booked at its slot, the
 * backlog holds at most the lane's burst in the shared limit at any time.
 */
final class LowPriorityLane {

    /** Appended to each policy name: the lane's state lives beside the shared limit's, never in it. */
    static final String SUFFIX = "~low";

    private final RateLimiter lane;
    private final Duration maxWait;
    /** The shared limiter's bookings of this lane's calls, in a line apart from high-priority calls'. */
    private final OnTime shared;

    LowPriorityLane(RateLimiter shared, double highShare, Duration maxWait, OnTime onTime) {
        this.lane = shared.withLimits(scaled(shared.limits(), highShare));
        this.maxWait = maxWait;
        this.shared = onTime;
        lane.checkCanWait(maxWait);
    }

    /** Each limit at {@code 1 - highShare} of its count and burst, rounded down. */
    private static List<Limit> scaled(List<Limit> limits, double highShare) {
        List<Limit> lane = new ArrayList<>(limits.size());
        for (Limit limit : limits) {
            long count = lowShare(limit.count(), highShare);
            long burst = limit.algorithm().hasBurst() ? Math.max(1, lowShare(limit.burst(), highShare)) : count;
            if (count < 1 || burst < limit.cost()) {
                throw new IllegalArgumentException("'highPriorityShare' " + highShare + " leaves low-priority calls "
                        + (count < 1 ? "no whole unit" : "less than one call's cost (" + limit.cost() + ")")
                        + " of limit '" + limit + "'; lower the share, or raise the count and period together");
            }
            String policy = limit.policy() + SUFFIX;
            try {
                lane.add(new Limit(policy, limit.algorithm(), count, limit.period(), burst, limit.cost()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("the low-priority lane of limit '" + limit + "' (policy '" + policy
                        + "'): " + e.getMessage(), e);
            }
        }
        return lane;
    }

    /** {@code units} at one minus the share, rounded down; the epsilon keeps 0.7 * 10 at 7, not 6. */
    private static long lowShare(long units, double highShare) {
        return (long) Math.floor((1 - highShare) * units + 1e-9);
    }

    List<Limit> limits() {
        return lane.limits();
    }

    Duration maxWait() {
        return maxWait;
    }

    /**
     * The lane's slot, then the shared limiter's, sent on time (a late shared slot is booked again,
     * the lane's is not); at most {@link #maxWait} in all.
     */
    Decision acquire(String key) throws InterruptedException {
        long started = System.nanoTime();
        Decision slot = lane.acquire(key, maxWait);
        if (!slot.allowed()) {
            return slot;
        }
        return shared.acquire(key, left(started));
    }

    /**
     * As {@link #acquire}, blocking no thread. A stage completed otherwise first (cancelled, timed
     * out) cancels the reservation it waits on, and books the shared limiter no more.
     */
    CompletableFuture<Decision> acquireAsync(String key) {
        long started = System.nanoTime();
        CompletableFuture<Decision> result = new CompletableFuture<>();
        CompletableFuture<Decision> slot = lane.acquireAsync(key, maxWait);
        AtomicReference<CompletableFuture<Decision>> current = new AtomicReference<>(slot);
        slot.whenComplete((decision, failure) -> {
            if (failure != null || !decision.allowed() || result.isDone()) {
                complete(result, decision, failure);
                return;
            }
            CompletableFuture<Decision> booked = shared.acquireAsync(key, left(started));
            current.set(booked);
            // given up while booking: the check after the set sees it, or the caller's cancel sees booked
            if (result.isDone()) {
                booked.cancel(false);
            }
            booked.whenComplete((granted, failed) -> complete(result, granted, failed));
        });
        result.whenComplete((decision, failure) -> current.get().cancel(false));
        return result;
    }

    private static void complete(CompletableFuture<Decision> result, Decision decision, Throwable failure) {
        if (failure != null) {
            result.completeExceptionally(failure);
        } else {
            result.complete(decision);
        }
    }

    /** What is left of the longest wait: the shared limiter gets only that. */
    private Duration left(long startedNanos) {
        long left = maxWait.toNanos() - (System.nanoTime() - startedNanos);
        return left <= 0 ? Duration.ZERO : Duration.ofNanos(left);
    }

    @Override
    public String toString() {
        return "low-priority lane " + lane.limits();
    }
}
