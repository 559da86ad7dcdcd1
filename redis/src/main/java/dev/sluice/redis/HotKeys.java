package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.internal.Timeouts;
import dev.sluice.spi.CompiledLimit;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hot keys decided in this JVM: a caller for which this instance alone makes at least
 * {@code threshold} single-limit token-bucket or GCRA decisions a second takes a <em>slice</em> of
 * its budget from Redis in one {@code slice.lua} call and grants the slice's requests here,
 * without a round trip each.
 *
 * <p>Exact across instances: a slice is spent in Redis before any of it is granted, so the fleet
 * admits at most what one caller deciding every request in Redis would. What a slice can strand
 * (spent in Redis, granted by no one) is bounded three ways: a slice is about what this instance
 * granted in one slice's lifetime before (its own recent rate), at most a quarter of the whole
 * requests left in the budget ({@link #SHARE}; one when fewer), and it lives at most a tenth of the
 * limit's period and never more than 1 s; what is left of it is given back (refunded) when it
 * expires, with the next slice's call when one follows, and when the store closes.
 *
 * <p>Hot callers are found by a small counting sketch (two rows of {@value #WIDTH} counters, reset
 * every {@value #WINDOW_MILLIS} ms), not a map of every caller: a decision that is not sliced costs
 * two counter increments. At most {@value #MAX_SLICES} callers hold slices at once; a slice whose
 * caller's rate falls below half the threshold is dropped when it expires.
 *
 * <p>A decision of several limits is never sliced (its limits must be decided together, all or
 * nothing, in one script), nor one of a window or log (they do not refill continuously: their
 * state is a count in a window, which a slice of their own would need a window to match).
 *
 * <p>Thread-safe.
 */
final class HotKeys {

    /** The default decisions per second of one caller on this instance from which it is sliced. */
    static final int DEFAULT_THRESHOLD = 500;
    /** A slice is at most the budget's whole requests divided by this (at least one when one fits). */
    static final int SHARE = 4;
    static final int MAX_SLICES = 1024;
    static final int WIDTH = 1024;
    static final long WINDOW_MILLIS = 100;
    private static final long WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(WINDOW_MILLIS);
    /** The longest a slice lives: what is left of it is given back after this at the latest. */
    static final long MAX_LIFETIME_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long MIN_LIFETIME_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** How long closing the store waits for the slices' remainders to be given back. */
    private static final long CLOSE_WAIT_MILLIS = 2_000;
    /** slice.lua's answer for state written under other units: decide.lua converts it. */
    private static final long OTHER_UNITS = -2;
    /** No time yet (a System.nanoTime reading may be any long, but this one hardly). */
    private static final long NONE = Long.MIN_VALUE;

    /** Decides requests the usual way: for state slice.lua leaves to decide.lua. */
    interface Direct {
        CompletionStage<Decision> decide(StorageKey key, long deadlineNanos);
    }

    private final LuaScript script;
    private final TimeSource testTime;
    private final Direct direct;
    private final int threshold;
    private final int perWindow;
    /** Two rows of counters, racy on purpose: a lost increment only makes a caller look cooler. */
    private final int[] counts = new int[2 * WIDTH];
    private final AtomicLong window = new AtomicLong();
    private final ConcurrentHashMap<String, Slice> slices = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param threshold decisions per second of one caller on this instance from which it is sliced, at least 1
     * @param testTime  the clock to use instead of the Redis server's, or {@code null} in production
     */
    HotKeys(RedissonClient client, int threshold, TimeSource testTime, Direct direct) {
        this.script = new LuaScript(client, "slice.lua");
        this.testTime = testTime;
        this.direct = direct;
        this.threshold = threshold;
        this.perWindow = (int) Math.max(1, threshold * WINDOW_MILLIS / 1_000);
    }

    /** Loads slice.lua into the script cache of every master (and replica). */
    CompletableFuture<Void> loadEverywhere() {
        return script.loadEverywhere();
    }

    /**
     * The decision of a hot caller's request from its slice (or the next one), or {@code null} when
     * the request is to be decided in Redis as usual: it is not hot, has several limits, or its
     * limit is a window or log.
     */
    CompletionStage<Decision> decide(StorageKey key, long deadlineNanos) {
        String tag = key.tag;
        List<Limit> limits = key.limits;
        Slice slice = slices.get(tag);
        if (slice != null && !slice.key.sameLimits(key)) {
            // the caller asks under other limits (another cost, another route): its state in Redis
            // must be whole before they read it, so the slice goes, given back first
            return retire(tag).thenCompose(back -> direct.decide(key, deadlineNanos));
        }
        if (limits.size() != 1) {
            return null;
        }
        Limit limit = limits.get(0);
        if (limit.algorithm() != Algorithm.TOKEN_BUCKET && limit.algorithm() != Algorithm.GCRA) {
            return null;
        }
        if (slice == null) {
            if (!hot(tag) || closed) {
                return null;
            }
            if (slice == null) {
                if (slices.size() >= MAX_SLICES) {
                    return null;
                }
                slice = slices.computeIfAbsent(tag, t -> new Slice(key));
            }
            if (!slice.key.sameLimits(key)) {
                return null; // the caller is hot under other limits, which hold its slice
            }
        }
        return slice.decide(deadlineNanos);
    }

    /**
     * Drops the caller's slice, if any, completing once what it held is given back (and any call
     * of it in flight has come back): before a refund or reset, whose scripts read the state in
     * Redis alone, and before a decision under other limits.
     */
    CompletableFuture<Void> retire(String tag) {
        Slice slice = slices.get(tag);
        return slice == null ? CompletableFuture.completedFuture(null) : slice.close();
    }

    /** Counts a decision of {@code tag}; whether it reaches the threshold in this window. */
    private boolean hot(String tag) {
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

    /** Gives back what every slice holds, waiting for Redis at most {@value #CLOSE_WAIT_MILLIS} ms. */
    void close() {
        closed = true;
        List<CompletableFuture<?>> returns = new ArrayList<>();
        for (String tag : List.copyOf(slices.keySet())) {
            returns.add(retire(tag));
        }
        try {
            CompletableFuture.allOf(returns.toArray(CompletableFuture[]::new)).get(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // Redis is gone or slow: what is not given back comes back as the bucket refills
        }
    }

    /** How many callers hold a slice (for tests). */
    int slices() {
        return slices.size();
    }

    private String now() {
        return testTime == null ? "" : Long.toString(testTime.nowMicros());
    }

    /** The clock a slice's decisions count down on: the store's (the test clock in tests). */
    private long micros() {
        return testTime == null ? System.nanoTime() / 1_000 : testTime.nowMicros();
    }

    /** One hot caller's slice: the requests Redis granted this instance and it has not granted yet. */
    private final class Slice {
        final StorageKey key;
        final String tag;
        final Limit limit;
        final String[] encoded;
        final long lifetimeNanos;
        final long perToken;
        final long perMicro;
        final long capacity;
        /** Completes when the slice is dead, no call of it is in flight and what it held is given back. */
        final CompletableFuture<Void> retired = new CompletableFuture<>();

        // guarded by this
        private long left;
        private long used;
        /** Requests granted since the last look at whether the caller cooled down. */
        private long sinceCheck;
        private long want = 1;
        private long takenAt;
        private long expiresAt;
        /** The units used in Redis after the last call (the whole slice counted), and how far its time was ahead. */
        private long debt;
        private long skew;
        private long takenAtMicros;
        /** The script's time at the last call. */
        private long callNow;
        /**
         * The caller's bucket as decide.lua would hold it, without what the slice still holds:
         * the units used at {@code twinAt} (the bucket's time, on {@link #micros()}). It differs
         * from Redis's once the bucket would have been full: decide.lua loses the refill past
         * the full, while Redis, the slice still counted in it, does not.
         */
        private long twinDebt;
        private long twinAt;
        /** When the last request was granted here, on {@link #micros()}; {@link #NONE} before any. */
        private long lastGrantMicros = NONE;
        private boolean calling;
        private boolean dead;
        private long generation;
        private final ArrayDeque<CompletableFuture<Decision>> waiting = new ArrayDeque<>();

        Slice(StorageKey key) {
            this.key = key;
            this.tag = key.tag;
            this.limit = key.limits.get(0);
            this.encoded = DecideScript.encode(limit);
            CompiledLimit compiled = CompiledLimit.of(limit);
            this.perToken = compiled.unitsPerToken();
            this.perMicro = compiled.unitsPerMicro();
            this.capacity = compiled.capacityUnits();
            // a dead slice stays found until what it held is back in Redis: the caller's next
            // decisions wait for that, and never read a state that still lacks it
            retired.whenComplete((back, failure) -> slices.remove(tag, this));
            this.lifetimeNanos = Math.max(MIN_LIFETIME_NANOS,
                    Math.min(MAX_LIFETIME_NANOS, TimeUnit.MICROSECONDS.toNanos(limit.periodMicros()) / 10));
        }

        CompletionStage<Decision> decide(long deadlineNanos) {
            long give;
            long asked;
            CompletableFuture<Decision> answer;
            synchronized (this) {
                if (dead) {
                    return retired.thenCompose(back -> direct.decide(key, deadlineNanos));
                }
                long now = System.nanoTime();
                if (left > 0 && now < expiresAt) {
                    return CompletableFuture.completedFuture(grant());
                }
                answer = new CompletableFuture<>();
                waiting.add(answer);
                if (calling) {
                    return answer;
                }
                calling = true;
                give = left;
                left = 0;
                asked = nextWant(now);
            }
            call(give, asked);
            return answer;
        }

        /**
         * The next slice: the requests this instance granted per lifetime in the last slice (its
         * own rate; grown when the slice ran out early), with every waiting request, at least one
         * and at most the limit's capacity. Called holding the lock.
         */
        private long nextWant(long now) {
            if (takenAt != 0) {
                long elapsed = Math.max(1, now - takenAt);
                double perLifetime = (double) used * lifetimeNanos / Math.min(elapsed, lifetimeNanos);
                want = (long) Math.ceil(perLifetime);
            }
            long capacity = limit.capacity() / limit.cost();
            return Math.max(1, Math.min(capacity, want + waiting.size()));
        }

        /**
         * What a call giving back {@code give} requests sends besides: when the last request was
         * granted here, on the script's clock (the state is written as of then, as decide.lua left
         * it at that request), and the units the bucket would have lost to the full since the
         * call (charged back, so that lending a slice never leaves the bucket fuller than
         * decide.lua would); '' and 0 when there is nothing to write. Called with no grant
         * possible meanwhile (a call is due, or the slice is dead).
         */
        private synchronized String[] handBack(long give) {
            if (lastGrantMicros == NONE || (give == 0 && lastGrantMicros <= takenAtMicros)) {
                return new String[] {"", "0"};
            }
            long at = callNow + Math.max(0, lastGrantMicros - takenAtMicros);
            long stamp = takenAtMicros + skew;
            long inRedis = Math.max(0, drained(debt, Math.max(0, twinAt - stamp)) - give * limit.cost() * perToken);
            return new String[] {Long.toString(at), Long.toString(Math.max(0, twinDebt - inRedis))};
        }

        /** Units used, {@code micros} of refill later (none left once it covers them all). */
        private long drained(long units, long micros) {
            return units <= 0 || micros >= ceilDiv(units, perMicro) ? 0 : units - micros * perMicro;
        }

        /** Sends a slice.lua call giving back {@code give} requests and asking for {@code asked}; {@code calling} is set. */
        private void call(long give, long asked) {
            String[] back = handBack(give);
            Object[] args = new Object[13];
            args[0] = now();
            System.arraycopy(encoded, 0, args, 1, encoded.length);
            args[8] = Long.toString(give);
            args[9] = Long.toString(asked);
            args[10] = Integer.toString(SHARE);
            args[11] = back[0];
            args[12] = back[1];
            script.<List<Object>>eval(RScript.ReturnType.LIST, key.keys(), args)
                    .whenComplete((reply, failure) -> settle(give, asked, reply, failure));
        }

        /** Takes a slice.lua reply: grants the waiting requests from the new slice, or refuses them. */
        private void settle(long give, long asked, List<Object> reply, Throwable failure) {
            List<CompletableFuture<Decision>> granted = new ArrayList<>();
            List<Decision> grants = new ArrayList<>();
            List<CompletableFuture<Decision>> refused = new ArrayList<>();
            List<CompletableFuture<Decision>> decidedDirectly = new ArrayList<>();
            Decision rejection = null;
            Throwable failed = null;
            long nextAsk = -1;
            long giveBack = -1;
            synchronized (this) {
                calling = false;
                if (failure != null) {
                    // what was to be given back may or may not have been: it is not offered twice
                    failed = DecideScript.failure(failure);
                    refused.addAll(waiting);
                    waiting.clear();
                } else if (DecideScript.number(reply, 0) == OTHER_UNITS) {
                    dead = true;
                    decidedDirectly.addAll(waiting);
                    waiting.clear();
                } else {
                    long now = System.nanoTime();
                    long got = DecideScript.number(reply, 0);
                    left = got;
                    if (asked > 0) {
                        // a give-back alone leaves the last slice's rate to size the next one
                        used = 0;
                        takenAt = now;
                        expiresAt = now + lifetimeNanos;
                    }
                    debt = DecideScript.number(reply, 5);
                    skew = DecideScript.number(reply, 6);
                    twinDebt = debt - got * limit.cost() * perToken;
                    callNow = DecideScript.number(reply, 7);
                    // the reply's numbers are as of callNow: on the test clock exactly, on this
                    // JVM's clock from when the reply came
                    takenAtMicros = testTime == null ? micros() : callNow;
                    twinAt = takenAtMicros + skew;
                    long gen = ++generation;
                    while (left > 0 && !waiting.isEmpty()) {
                        granted.add(waiting.poll());
                        grants.add(grant());
                    }
                    if (!waiting.isEmpty()) {
                        if (got == 0 && asked > 0) {
                            rejection = rejected(reply);
                            refused.addAll(waiting);
                            waiting.clear();
                        } else if (dead) {
                            decidedDirectly.addAll(waiting);
                            waiting.clear();
                        } else {
                            // Redis may hold more (a slice is at most a share of it): another call
                            // for the requests that came meanwhile; refused only when none fits
                            calling = true;
                            nextAsk = nextWant(now);
                        }
                    }
                    if (!calling && !dead) {
                        expireLater(gen);
                    }
                }
                if (dead && !calling) {
                    giveBack = left;
                    left = 0;
                }
            }
            for (int i = 0; i < granted.size(); i++) {
                granted.get(i).complete(grants.get(i));
            }
            for (CompletableFuture<Decision> f : refused) {
                if (failed != null) {
                    f.completeExceptionally(failed);
                } else {
                    f.complete(rejection);
                }
            }
            if (giveBack >= 0) {
                giveBack(giveBack).whenComplete((x, e) -> retired.complete(null));
            }
            for (CompletableFuture<Decision> f : decidedDirectly) {
                retired.thenCompose(back -> direct.decide(key, System.nanoTime() + TimeUnit.SECONDS.toNanos(1)))
                        .whenComplete((d, e) -> {
                            if (e != null) {
                                f.completeExceptionally(DecideScript.unwrap(e));
                            } else {
                                f.complete(d);
                            }
                        });
            }
            if (nextAsk >= 0) {
                call(0, nextAsk);
            }
        }

        /** When slice {@code gen} expires, gives back what is left of it unless a later call has done so. */
        private void expireLater(long gen) {
            Timeouts.orTimeout(new CompletableFuture<Void>(), lifetimeNanos).whenComplete((nothing, elapsed) -> expire(gen));
        }

        /**
         * A slice's lifetime after its call: what is left of it is given back; a caller granted
         * fewer than half the threshold's requests a second since the last look is decided in
         * Redis again (until the sketch finds it hot once more); a hot one is looked at again
         * after another lifetime.
         */
        private void expire(long gen) {
            long give;
            boolean cooled;
            synchronized (this) {
                if (gen != generation || calling || dead) {
                    return;
                }
                long rate = sinceCheck * TimeUnit.SECONDS.toNanos(1) / lifetimeNanos;
                sinceCheck = 0;
                cooled = rate * 2 < threshold;
                give = left;
                left = 0;
                if (cooled) {
                    dead = true;
                } else if (give > 0) {
                    calling = true;
                }
            }
            if (cooled) {
                giveBack(give).whenComplete((x, e) -> retired.complete(null));
            } else if (give > 0) {
                call(give, 0);
            } else {
                expireLater(gen);
            }
        }

        /**
         * Gives back what the slice holds, for good, now or (a call in flight) when its reply
         * comes; completes when it is given back.
         */
        CompletableFuture<Void> close() {
            long give;
            synchronized (this) {
                if (dead) {
                    return retired;
                }
                dead = true;
                if (calling) {
                    return retired;
                }
                give = left;
                left = 0;
            }
            giveBack(give).whenComplete((x, e) -> retired.complete(null));
            return retired;
        }

        /** A slice.lua call only giving back {@code give} requests, outside the slice's turn. */
        private CompletableFuture<Void> giveBack(long give) {
            String[] back = handBack(give);
            if (back[0].isEmpty() && give == 0) {
                return CompletableFuture.completedFuture(null);
            }
            Object[] args = new Object[13];
            args[0] = now();
            System.arraycopy(encoded, 0, args, 1, encoded.length);
            args[8] = Long.toString(give);
            args[9] = "0";
            args[10] = Integer.toString(SHARE);
            args[11] = back[0];
            args[12] = back[1];
            return script.<List<Object>>eval(RScript.ReturnType.LIST, key.keys(), args).handle((reply, failure) -> null);
        }

        /**
         * Grants one request of the slice, answered as decide.lua answers it: from the bucket it
         * would hold (see {@link #twinDebt}), refilled to now, with this request spent. Called
         * holding the lock, {@code left} positive.
         */
        private Decision grant() {
            left--;
            used++;
            sinceCheck++;
            long now = micros();
            long t = Math.max(now, twinAt);
            twinDebt = drained(twinDebt, t - twinAt) + limit.cost() * perToken;
            twinAt = t;
            lastGrantMicros = now;
            long ahead = t - now;
            long remaining = Math.floorDiv(capacity - twinDebt, perToken);
            long reset = ahead + ceilDiv(twinDebt, perMicro);
            long next = ahead + ceilDiv(twinDebt + (remaining + 1) * perToken - capacity, perMicro);
            Decision.Quota quota = DecideScript.quota(limit, true, remaining, DecideScript.micros(reset), Duration.ZERO,
                    DecideScript.micros(next));
            return new Decision(Decision.Outcome.ALLOWED, List.of(quota), Duration.ZERO);
        }

        /** The refusal of the requests a call found no budget for: nothing of theirs was spent. */
        private Decision rejected(List<Object> reply) {
            Duration retry = DecideScript.micros(DecideScript.number(reply, 3));
            Decision.Quota quota = DecideScript.quota(limit, false, DecideScript.number(reply, 1),
                    DecideScript.micros(DecideScript.number(reply, 2)), retry, DecideScript.micros(DecideScript.number(reply, 4)));
            return new Decision(Decision.Outcome.REJECTED, List.of(quota), retry);
        }
    }

    private static long ceilDiv(long a, long b) {
        return -Math.floorDiv(-a, b);
    }
}
