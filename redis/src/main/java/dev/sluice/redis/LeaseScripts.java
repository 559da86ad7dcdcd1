package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.spi.LimitKeys;
import dev.sluice.spi.RateLimitStore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The Java side of {@code refund.lua}, {@code reserve.lua}, {@code pause.lua}, {@code giveback.lua}
 * and {@code lease.lua}, and the only Java knowing their layouts: a refund is one script call with
 * {@code decide.lua}'s values per limit ({@link DecideScript#encode}), and so is a reservation
 * ({@code RateLimiter.acquire}) and the return of one its waiter gave up (those values and where it
 * ends each limit's schedule); taking a concurrency lease is one call of {@code lease.lua};
 * returning one is one {@code ZREM} of its id.
 */
final class LeaseScripts {

    private final RedisCalls calls;
    private final TimeSource testTime;
    private final LuaScript refund;
    private final LuaScript lease;
    /** Reservations: no batching, no local copy. */
    private final LuaScript reserve;
    private final LuaScript pause;
    private final LuaScript giveBack;

    /**
     * @param testTime the clock to use instead of the Redis server's, or {@code null} in production
     */
    LeaseScripts(RedisCalls calls, TimeSource testTime) {
        this.calls = calls;
        this.testTime = testTime;
        this.refund = new LuaScript(calls, "refund.lua");
        this.lease = LuaScript.alone(calls, "lease.lua");
        this.reserve = new LuaScript(calls, "reserve.lua");
        this.pause = new LuaScript(calls, "pause.lua");
        this.giveBack = new LuaScript(calls, "giveback.lua");
    }

    /** Loads every one of these scripts into the script cache of every master (and replica). */
    CompletableFuture<Void> loadEverywhere() {
        return CompletableFuture.allOf(refund.loadEverywhere(), lease.loadEverywhere(), reserve.loadEverywhere(),
                pause.loadEverywhere(), giveBack.loadEverywhere());
    }

    /** {@code ARGV[1]} of every one of these scripts: the injected time, or '' for the Redis server's clock. */
    private String now() {
        return testTime == null ? "" : Long.toString(testTime.nowMicros());
    }

    /** Gives back one request of {@code key}'s caller under its limits. */
    CompletableFuture<Void> refund(StorageKey key) {
        List<Object> args = new ArrayList<>(1 + 7 * key.limits.size());
        args.add(now());
        for (Limit limit : key.limits) {
            args.addAll(List.of(DecideScript.encode(limit)));
        }
        return refund.<Object>eval(RedisCalls.Reply.LONG, key.keys(), args.toArray()).thenRun(() -> { });
    }

    /** Pauses the caller with hash tag {@code tag} under {@code limits} for {@code micros}: one call of pause.lua. */
    CompletableFuture<Void> pause(String tag, List<Limit> limits, long micros) {
        List<Object> keys = new ArrayList<>(limits.size());
        List<Object> args = new ArrayList<>(2 + 7 * limits.size());
        args.add(now());
        args.add(Long.toString(micros));
        for (Limit limit : limits) {
            keys.add(key(tag, limit));
            args.addAll(List.of(DecideScript.encode(limit)));
        }
        for (Limit limit : limits) {
            keys.add(StorageKey.slotsKey(key(tag, limit)));
        }
        return pause.<Object>eval(RedisCalls.Reply.LONG, keys, args.toArray()).handle((reply, failure) -> {
            if (failure != null) {
                throw new CompletionException(DecideScript.failure(failure));
            }
            return null;
        });
    }

    /**
     * Returns a reservation of {@code key}'s caller its waiter gave up, as {@link #book} answered
     * it: one call of giveback.lua. A booking that tells no ends (not this store's) gives back nothing.
     */
    CompletableFuture<Void> giveBack(StorageKey key, RateLimitStore.Booking booking) {
        long[] ends = booking.ends();
        if (ends.length != 3 * key.limits.size()) {
            return CompletableFuture.completedFuture(null);
        }
        List<Object> args = new ArrayList<>(1 + 10 * key.limits.size());
        args.add(now());
        for (int i = 0; i < key.limits.size(); i++) {
            args.addAll(List.of(DecideScript.encode(key.limits.get(i))));
            args.add(Long.toString(ends[3 * i]));
            args.add(Long.toString(ends[3 * i + 1]));
            args.add(Long.toString(ends[3 * i + 2]));
        }
        return giveBack.<Object>eval(RedisCalls.Reply.LONG, key.keysWithSlots(), args.toArray())
                .handle((reply, failure) -> {
            if (failure != null) {
                throw new CompletionException(DecideScript.failure(failure));
            }
            return null;
        });
    }

    /**
     * Reserves one request of {@code key}'s caller under its limits, at most {@code maxWait} ahead,
     * telling where it ends each limit's schedule: one call of reserve.lua.
     */
    CompletableFuture<RateLimitStore.Booking> book(StorageKey key, Duration maxWait) {
        List<Limit> limits = key.limits;
        List<Object> args = new ArrayList<>(2 + 7 * limits.size());
        args.add(now());
        args.add(Long.toString(maxWait.toNanos() / 1_000));
        for (Limit limit : limits) {
            args.addAll(List.of(DecideScript.encode(limit)));
        }
        return reserve.<List<Object>>eval(RedisCalls.Reply.LIST, key.keysWithSlots(), args.toArray())
                .handle((reply, failure) -> {
            if (failure != null) {
                throw new CompletionException(DecideScript.failure(failure));
            }
            return reservation(reply, limits);
        });
    }

    /**
     * The reply of reserve.lua: reserved, wait_us, then per limit fits,
     * remaining, reset_us, retry_us, next_us; when reserved, then per limit end, end_rem and the
     * reserved instant.
     */
    static RateLimitStore.Booking reservation(List<Object> reply, List<Limit> limits) {
        try {
            boolean reserved = DecideScript.number(reply, 0) == 1;
            List<Decision.Quota> quotas = new ArrayList<>(limits.size());
            for (int i = 0; i < limits.size(); i++) {
                int at = 2 + 5 * i;
                quotas.add(DecideScript.quota(limits.get(i), DecideScript.number(reply, at) == 1,
                        DecideScript.number(reply, at + 1), DecideScript.micros(DecideScript.number(reply, at + 2)),
                        DecideScript.micros(DecideScript.number(reply, at + 3)),
                        DecideScript.micros(DecideScript.number(reply, at + 4))));
            }
            Decision decision = new Decision(reserved ? Decision.Outcome.ALLOWED : Decision.Outcome.REJECTED, quotas,
                    DecideScript.micros(DecideScript.number(reply, 1)));
            if (!reserved) {
                return new RateLimitStore.Booking(decision, RateLimitStore.Booking.NOWHERE);
            }
            long[] ends = new long[3 * limits.size()];
            for (int i = 0; i < ends.length; i++) {
                ends[i] = DecideScript.number(reply, 2 + 5 * limits.size() + i);
            }
            return new RateLimitStore.Booking(decision, ends);
        } catch (RuntimeException e) {
            throw new IllegalStateException("unreadable reply from reserve.lua: " + e, e);
        }
    }

    /** Takes lease {@code id} of the caller with hash tag {@code tag} under a concurrency limit. */
    CompletableFuture<Decision> acquire(String tag, Limit limit, String id) {
        List<Object> keys = List.of(key(tag, limit));
        return lease.<List<Object>>eval(RedisCalls.Reply.LIST, keys, now(), Long.toString(limit.count()),
                Long.toString(limit.periodMicros()), id).handle((reply, failure) -> {
                    if (failure != null) {
                        throw new CompletionException(DecideScript.failure(failure));
                    }
                    return decision(reply, limit);
                });
    }

    /** Returns lease {@code id}: one {@code ZREM}, which does nothing to an expired or returned lease. */
    CompletableFuture<Void> release(String tag, Limit limit, String id) {
        return calls.sortedSetRemove(key(tag, limit), id);
    }

    private static String key(String tag, Limit limit) {
        return LimitKeys.key(tag, limit);
    }

    /** {@code lease.lua}'s reply: allowed, remaining, reset_us, retry_us, next_us. */
    static Decision decision(List<Object> reply, Limit limit) {
        try {
            boolean allowed = DecideScript.number(reply, 0) == 1;
            Duration retry = DecideScript.micros(DecideScript.number(reply, 3));
            Decision.Quota quota = DecideScript.quota(limit, allowed, DecideScript.number(reply, 1),
                    DecideScript.micros(DecideScript.number(reply, 2)), retry,
                    DecideScript.micros(DecideScript.number(reply, 4)));
            return new Decision(allowed ? Decision.Outcome.ALLOWED : Decision.Outcome.REJECTED, List.of(quota), retry);
        } catch (RuntimeException e) {
            throw new IllegalStateException("unreadable reply from lease.lua: " + e, e);
        }
    }
}
