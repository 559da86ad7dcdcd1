package dev.sluice.outbound;

import dev.sluice.Decision;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This instance's calls that lost their slot (it came back late, or they gave it to an earlier
 * call that did), per key, in the order they first asked for a permit: the line {@link OnTime}
 * hands on-time slots down. Each call takes a place ({@link #place()}) when it first asks; a call
 * holding an on-time slot gives it to the earliest call in line with an earlier place, if any.
 * Thread-safe; a key's line is dropped when it empties, so an idle key holds nothing.
 */
final class WaitingLine {

    /**
     * A slot in hand: the limiter's decision, and the latest instant on the permits' clock at which
     * the slot can have begun ({@code nanos}: when its reservation was sent, plus the wait the store
     * answered), from which its lateness counts.
     */
    record Slot(Decision decision, long dueNanos) {
    }

    /** A call in line: its place, and the slot it will go on, from a call handing one down or its own booking. */
    static final class Waiter {
        final long place;
        final CompletableFuture<Slot> slot = new CompletableFuture<>();
        /** Its own booking's refusal, while it waits on for a slot handed down; {@code null}: none. */
        volatile Decision refused;
        /** Its wait has run out: a refusal of its own booking fails it at once. */
        volatile boolean expired;

        Waiter(long place) {
            this.place = place;
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
     * {@code before}, skipping calls that have stopped waiting.
     *
     * @return whether a call took it
     */
    boolean handDown(String key, long before, Slot slot) {
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
                return false;
            }
            if (first[0].slot.complete(slot)) {
                return true;
            }
        }
        return false;
    }

    /** Whether no call waits in any line: for tests. */
    boolean idle() {
        return lines.isEmpty();
    }
}
