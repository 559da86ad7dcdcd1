package dev.sluice.memory;

import dev.sluice.TimeSource;

/**
 * {@link TimeSource#SYSTEM}'s wall clock, read through {@link System#nanoTime()}: the memory
 * store reads the clock once per decision, and {@code Instant.now()} (a native call) costs a
 * decision a good share of its time where {@code nanoTime} is a plain read. The two clocks
 * advance alike (the system slews both the same), so the elapsed monotonic time is added to a
 * wall-clock reading taken at most a second earlier; re-anchoring every second makes a step of
 * the system clock show within a second. The algorithms take time that moves back (by the
 * microsecond of a re-anchoring, or by a step) without granting anything extra.
 *
 * <p>Thread-safe; the anchor is replaced whole, never torn.
 */
final class WallClock implements TimeSource {

    static final WallClock INSTANCE = new WallClock();
    private static final long ANCHOR_NANOS = 1_000_000_000L;

    /** A wall-clock reading in microseconds and the monotonic time it was taken at. */
    private record Anchor(long nanos, long micros) {
    }

    private volatile Anchor anchor = anchor();

    private WallClock() {
    }

    private static Anchor anchor() {
        long micros = TimeSource.SYSTEM.nowMicros();
        return new Anchor(System.nanoTime(), micros);
    }

    @Override
    public long nowMicros() {
        long nanos = System.nanoTime();
        Anchor at = anchor;
        long since = nanos - at.nanos;
        if (since >= ANCHOR_NANOS) {
            at = anchor(); // racing threads each take a reading: any of them is a good anchor
            anchor = at;
            since = Math.max(0, nanos - at.nanos);
        }
        // A thread that read nanoTime just before another re-anchored sees its own time a
        // little behind the anchor: that is the moment it read, in the wall clock's terms.
        return at.micros + Math.floorDiv(since, 1_000);
    }
}
