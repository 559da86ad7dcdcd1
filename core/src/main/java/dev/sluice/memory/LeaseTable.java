package dev.sluice.memory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Ticker;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The in-memory store's concurrency leases: per caller and policy, each lease with its own expiry,
 * the Java twin of {@code lease.lua}. Every call trims the expired leases first, under the entry's
 * atomic {@code compute}; an entry lives until its last lease expires, and at most
 * {@code maximumCallers} entries are kept (an evicted caller's leases are forgotten: it may start
 * more requests, never fewer). Thread-safe.
 *
 * <p>A changed cap reads the leases held as they are: under a lowered count a caller is refused
 * (remaining 0) until its leases fall below the new count; a shortened lease bounds the leases
 * held to one lease from now; a lengthened one extends none.
 */
final class LeaseTable {

    /** The longest retry-after a refusal suggests: leases usually come back long before they expire. */
    static final long MAX_RETRY_MICROS = 1_000_000;

    private final TimeSource time;
    private final Cache<Key, Leases> table;

    private record Key(String tag, String policy) {
    }

    /** One caller's leases under one policy: lease id to expiry, in store time (µs). */
    private static final class Leases {
        final Map<String, Long> expiries = new HashMap<>();

        void trim(long now) {
            expiries.values().removeIf(expiry -> expiry <= now);
        }

        long newest() {
            return expiries.values().stream().mapToLong(Long::longValue).max().orElse(0);
        }

        /** The expiry of the lease that leaves {@code index} (from 0) in expiry order. */
        long expiring(int index) {
            return expiries.values().stream().mapToLong(Long::longValue).sorted().skip(index).findFirst().orElse(0);
        }
    }

    LeaseTable(TimeSource time, long maximumCallers) {
        this.time = time;
        this.table = Caffeine.newBuilder()
                .maximumSize(maximumCallers)
                .ticker(time == TimeSource.SYSTEM ? Ticker.systemTicker() : () -> time.nowMicros() * 1_000)
                .executor(Runnable::run)
                .expireAfter(new Expiry<Key, Leases>() {
                    @Override
                    public long expireAfterCreate(Key key, Leases leases, long currentTime) {
                        return untilLast(leases);
                    }

                    @Override
                    public long expireAfterUpdate(Key key, Leases leases, long currentTime, long currentDuration) {
                        return untilLast(leases);
                    }

                    @Override
                    public long expireAfterRead(Key key, Leases leases, long currentTime, long currentDuration) {
                        return currentDuration;
                    }
                })
                .build();
    }

    /** Nanoseconds until the last lease of an entry expires: it is empty from then on. */
    private long untilLast(Leases leases) {
        return Math.max(1, (leases.newest() - time.nowMicros()) * 1_000);
    }

    Decision acquire(String tag, Limit limit, String id) {
        Decision[] decided = new Decision[1];
        table.asMap().compute(new Key(tag, limit.policy()), (key, leases) -> {
            long now = time.nowMicros();
            Leases held = leases != null ? leases : new Leases();
            held.trim(now);
            long latest = now + limit.periodMicros();
            // taken under a longer lease: bounded by this one
            held.expiries.replaceAll((lease, expiry) -> Math.min(expiry, latest));
            boolean fits = held.expiries.size() < limit.count();
            if (fits) {
                held.expiries.put(id, latest);
            }
            decided[0] = decision(limit, fits, held, now);
            return held.expiries.isEmpty() ? null : held;
        });
        return decided[0];
    }

    void release(String tag, Limit limit, String id) {
        table.asMap().computeIfPresent(new Key(tag, limit.policy()), (key, leases) -> {
            leases.expiries.remove(id);
            leases.trim(time.nowMicros());
            return leases.expiries.isEmpty() ? null : leases;
        });
    }

    /**
     * The decision {@code lease.lua} answers: the leases left, never negative; until the next place
     * is back at the latest (the oldest lease expires, or, over a lowered count, the one that
     * brings the leases held below it) and until the last lease expires (every place); a refusal's
     * retry at most {@link #MAX_RETRY_MICROS}.
     */
    private static Decision decision(Limit limit, boolean fits, Leases held, long now) {
        int size = held.expiries.size();
        long remaining = Math.max(0, limit.count() - size);
        long next = size == 0 ? 0 : held.expiring((int) Math.max(0, size - limit.count())) - now;
        long reset = held.expiries.isEmpty() ? 0 : held.newest() - now;
        long retry = fits ? 0 : Math.min(next, MAX_RETRY_MICROS);
        Decision.Quota quota = new Decision.Quota(limit, fits, remaining, MemoryStore.micros(reset),
                MemoryStore.micros(retry), MemoryStore.micros(next));
        return new Decision(fits ? Decision.Outcome.ALLOWED : Decision.Outcome.REJECTED, List.of(quota),
                fits ? Duration.ZERO : MemoryStore.micros(retry));
    }
}
