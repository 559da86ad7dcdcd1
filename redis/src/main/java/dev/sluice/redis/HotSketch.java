package dev.sluice.redis;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Finds the callers this instance decides at least a threshold of times a second, without a map
 * of every caller: a count-min sketch of two rows of {@value #WIDTH} counters, reset every
 * {@value #WINDOW_MILLIS} ms. A caller counts as hot when both its counters reach the threshold's
 * share of a window; a collision can only make a caller look hotter than it is.
 *
 * <p>Thread-safe, and racy on purpose: a lost increment only makes a caller look cooler.
 */
final class HotSketch {

    static final int WIDTH = 1024;
    static final long WINDOW_MILLIS = 100;
    private static final long WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(WINDOW_MILLIS);

    private final int perWindow;
    private final int[] counts = new int[2 * WIDTH];
    private final AtomicLong window = new AtomicLong();

    /** @param threshold decisions per second from which a caller is hot, at least 1 */
    HotSketch(int threshold) {
        this.perWindow = (int) Math.max(1, threshold * WINDOW_MILLIS / 1_000);
    }

    /** Counts a decision of {@code tag}; whether it reaches the threshold in this window. */
    boolean hot(String tag) {
        long now = System.nanoTime() / WINDOW_NANOS;
        long current = window.get();
        if (now != current && window.compareAndSet(current, now)) {
            Arrays.fill(counts, 0);
        }
        int h = tag.hashCode() * 0x9E3779B9;
        int a = (h >>> 16) & (WIDTH - 1);
        int b = WIDTH + (h & (WIDTH - 1));
        int ca = ++counts[a];
        int cb = ++counts[b];
        return Math.min(ca, cb) >= perWindow;
    }
}
