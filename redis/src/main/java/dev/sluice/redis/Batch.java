package dev.sluice.redis;

import java.util.concurrent.TimeUnit;

/**
 * {@code size} identical requests of one caller under one set of limits ({@code key}), decided one
 * after another in one script call: what the {@link Coalescer} gathers and {@link DecideScript}
 * encodes. {@code deadlineNanos} (on {@link System#nanoTime()}'s clock) is when the last of them
 * stops waiting: a call is not sent again after it (see {@link DecideResends}).
 */
record Batch(StorageKey key, int size, long deadlineNanos) {

    /** A deadline far enough away to never matter, for requests without one. */
    static final long NO_DEADLINE_NANOS = TimeUnit.HOURS.toNanos(1);

    /** Requests without a deadline of their own. */
    Batch(StorageKey key, int size) {
        this(key, size, System.nanoTime() + NO_DEADLINE_NANOS);
    }
}
