package dev.sluice.tck;

import dev.sluice.TimeSource;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A clock the kit moves by hand, in microseconds: the time every store under test reads. */
final class ManualClock implements TimeSource {

    /** A start in 2033 aligned to every window the scenarios use: a multiple of 1 day and of 1000 s. */
    static final long ALIGNED_START = 2_000_160_000L * 1_000_000L;

    private final AtomicLong now = new AtomicLong(ALIGNED_START);

    @Override
    public long nowMicros() {
        return now.get();
    }

    void advance(Duration by) {
        now.addAndGet(by.toNanos() / 1_000);
    }

    void set(long micros) {
        now.set(micros);
    }
}
