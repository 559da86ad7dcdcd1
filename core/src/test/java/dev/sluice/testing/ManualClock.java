package dev.sluice.testing;

import dev.sluice.TimeSource;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A clock the test moves by hand, in microseconds. */
public final class ManualClock implements TimeSource {

    /** A start in 2033 aligned to every window the tests use: a multiple of 1 day and of 1000 s. */
    public static final long ALIGNED_START = 2_000_160_000L * 1_000_000L;

    private final AtomicLong now;

    public ManualClock(long startMicros) {
        this.now = new AtomicLong(startMicros);
    }

    public ManualClock() {
        this(ALIGNED_START);
    }

    @Override
    public long nowMicros() {
        return now.get();
    }

    public void advance(Duration by) {
        now.addAndGet(by.toNanos() / 1_000);
    }

    public void set(long micros) {
        now.set(micros);
    }
}
