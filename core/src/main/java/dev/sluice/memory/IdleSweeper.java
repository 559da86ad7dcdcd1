package dev.sluice.memory;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Drops callers whose every state has expired by the store's clock, a few at a time, walking the
 * callers round and round. It runs where callers are added (the store's locked path), so idle
 * callers leave at the pace new ones come; the size bound holds regardless. Removing such a
 * caller never changes a decision: each of its states reads as absent already.
 *
 * <p>It reads the decision's own time, so the lock-free path reads the clock once and the cache
 * keeps no clock of its own. Thread-safe: one thread sweeps at a time; the others skip.
 */
final class IdleSweeper {

    /** Callers examined each time the locked path runs: more than one, so the idle never outnumber the added. */
    static final int PER_LOCKED_DECISION = 2;

    private final ConcurrentMap<String, Caller> callers;
    private final ReentrantLock lock = new ReentrantLock();
    /** Where the walk is; weakly consistent, so callers added or removed meanwhile do no harm. */
    private Iterator<Map.Entry<String, Caller>> cursor;

    IdleSweeper(ConcurrentMap<String, Caller> callers) {
        this.callers = callers;
    }

    /** Examines up to {@code budget} callers, dropping those idle at {@code now} (store time, microseconds). */
    void sweep(long now, int budget) {
        if (!lock.tryLock()) {
            return;
        }
        try {
            for (int i = 0; i < budget; i++) {
                if (cursor == null || !cursor.hasNext()) {
                    cursor = callers.entrySet().iterator();
                    if (!cursor.hasNext()) {
                        return;
                    }
                }
                Map.Entry<String, Caller> entry = cursor.next();
                Caller seen = entry.getValue();
                if (seen.idleAt(now)) {
                    // Retired and removed in one step, as eviction does: a decision holding this
                    // caller then finds it retired (it committed nothing since) and reads the map again.
                    callers.computeIfPresent(entry.getKey(),
                            (tag, held) -> held == seen && held.retireIfIdle(now) ? null : held);
                }
            }
        } finally {
            lock.unlock();
        }
    }
}
