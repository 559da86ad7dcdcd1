package dev.sluice.outbound;

import dev.sluice.Decision;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * This instance's calls that lost their slot (it came back late, or they gave it to an earlier
 * call that did), per key, in the order they first asked for a permit: the line {@link OnTime}
 * hands on-time slots down. Each call takes a place ({@link #place()}) when it first asks; a call
 * holding an on-time slot gives it to the earliest call in line with an earlier place, if any, and
 * takes over that call's booking in flight. Thread-safe; a key's line is dropped when it empties,
 * so an idle key holds nothing.
 */
final class WaitingLine {

    /**
     * A slot in hand: the limiter's decision, and the latest instant on the permits' clock at which
     * the slot can have begun (when its reservation was sent, plus the wait the store answered),
     * from which its lateness counts.
     */
    record Slot(Decision decision, long dueNanos) {
    }

    /**
     * A booking in flight ({@code RateLimiter.acquireAsync}) made for a call in line, and the call
     * it now belongs to: a call that hands its slot down takes over the booking of the call that
     * took it, so that the booking made when a call came back late passes down the line instead of
     * one more being made at every hand-down. Its answer goes to its owner at the time, once.
     */
    static final class Rebooking {
        /** Handed back by {@link #handDown} when the call that took the slot had no booking in flight. */
        static final Rebooking NONE = new Rebooking(CompletableFuture.completedFuture(null), 0, null);

        final CompletableFuture<Decision> reserved;
        final long askedNanos;
        /** The call it was made for, whose wait it fits. */
        final Waiter madeFor;
        private Waiter owner;
        private boolean answered;

        Rebooking(CompletableFuture<Decision> reserved, long askedNanos, Waiter owner) {
            this.reserved = reserved;
            this.askedNanos = askedNanos;
            this.madeFor = owner;
            this.owner = owner;
        }

        /** Its answer has come: the owner it goes to, from now on the last. */
        synchronized Waiter answered() {
            answered = true;
            return owner;
        }

        /** Makes {@code waiter} its owner; {@code false} once its answer has come (it went to the owner before). */
        synchronized boolean passTo(Waiter waiter) {
            if (answered) {
                return false;
            }
            owner = waiter;
            return true;
        }
    }

    /** A call in line: its place, when its wait ends, the slot it will go on, and its booking in flight. */
    static final class Waiter {
        final long place;
        /** When its wait ends, on the permits' clock. */
        final long endsNanos;
        final CompletableFuture<Slot> slot = new CompletableFuture<>();
        final AtomicReference<Rebooking> booking = new AtomicReference<>();
        /** Its booking's refusal, while it waits on for a slot handed down; {@code null}: none. */
        volatile Decision refused;
        /** Its wait has run out: a refusal of its booking fails it at once. */
        volatile boolean expired;

        Waiter(long place, long endsNanos) {
            this.place = place;
            this.endsNanos = endsNanos;
        }
    }

    private final AtomicLong places = new AtomicLong();
    private final Map<String, TreeMap<Long, Waiter>> lines = new ConcurrentHashMap<>();

    /** A new call's place: after every call that asked before it on this instance. */
    long place() {
        return places.incrementAndGet();
    }

    void join(String key, Waiter waiter) {
        lines.compute(key, (k, line) -> {
            TreeMap<Long, Waiter> joined = line == null ? new TreeMap<>() : line;
            joined.put(waiter.place, waiter);
            return joined;
        });
    }

    void leave(String key, Waiter waiter) {
        lines.computeIfPresent(key, (k, line) -> {
            line.remove(waiter.place, waiter);
            return line.isEmpty() ? null : line;
        });
    }

    /**
     * Gives {@code slot} to the earliest call in {@code key}'s line whose place is before
     * {@code before}, skipping calls that have stopped waiting (their bookings in flight are
     * cancelled, which gives them back).
     *
     * @return {@code null} if no call took it; else the booking in flight the call that took it
     *         leaves behind, for the caller to take over or cancel ({@link Rebooking#NONE}: none)
     */
    Rebooking handDown(String key, long before, Slot slot) {
        while (lines.containsKey(key)) {
            Waiter[] first = new Waiter[1];
            lines.computeIfPresent(key, (k, line) -> {
                Map.Entry<Long, Waiter> earliest = line.firstEntry();
                if (earliest != null && earliest.getKey() < before) {
                    first[0] = line.pollFirstEntry().getValue();
                }
                return line.isEmpty() ? null : line;
            });
            if (first[0] == null) {
                return null;
            }
            // taken before the slot completes the waiter, whose cleanup would cancel it
            Rebooking left = first[0].booking.getAndSet(null);
            if (first[0].slot.complete(slot)) {
                return left == null ? Rebooking.NONE : left;
            }
            if (left != null) {
                left.reserved.cancel(false);
            }
        }
        return null;
    }

    /** Whether no call waits in any line: for tests. */
    boolean idle() {
        return lines.isEmpty();
    }
}
