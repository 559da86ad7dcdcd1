package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Hot keys decided in this JVM from slices of their budget.
 *
 * <h2>Design</h2>
 *
 * <p><b>Why slices.</b> Every decision of one caller goes to the same Redis key, so to one slot,
 * one master and one script at a time: a {@code key=global} cap or one busy client makes that key
 * a bottleneck, a round trip per request however many instances there are. A caller for which
 * this instance alone makes at least {@code threshold} single-limit token-bucket or GCRA decisions
 * a second takes a <em>slice</em> of its budget from Redis in one {@code slice.lua} call instead,
 * and the slice's requests are granted here, without a round trip each ({@link Slice}). One call
 * gives back what a slice has left and takes the next.
 *
 * <p><b>Exact across instances; what it trades.</b> A slice is spent in Redis before any of it is
 * granted, so the fleet admits at most what one caller deciding every request in Redis would. The
 * price is budget held back: a slice is spent in Redis and not yet granted by anyone, so the other
 * instances cannot have it. That is bounded three ways: a slice is about what this instance
 * granted in one slice's lifetime before (its own recent rate), at most a quarter of the whole
 * requests left in the budget ({@link #SHARE}; one when fewer), and it lives at most a tenth of the
 * limit's period and never more than 1 s. What is left of it is given back (refunded) when it
 * expires, with the next slice's call when one follows, and when the store closes.
 *
 * <p><b>Answers as from Redis.</b> A request granted from a slice is answered from a twin of the
 * caller's bucket ({@link TwinBucket}): the bucket decide.lua would hold without the slice, so its
 * remaining, reset and next unit are those a request decided in Redis would have got.
 *
 * <p><b>The state is whole for every other script.</b> A refund, a reset, a reservation, a
 * give-back or a pause reads the caller's state in Redis alone, and so does a decision under other
 * limits (another cost, another route): each retires the slice first ({@link #retire}). A dead
 * slice stays found until what it held is back in Redis, so the caller's next decisions wait for
 * that and never read a state that still lacks it.
 *
 * <p><b>Finding hot callers cheaply.</b> A counting sketch ({@link HotSketch}), not a map of every
 * caller: a decision that is not sliced costs two counter increments. At most
 * {@value #MAX_SLICES} callers hold slices at once; a slice whose caller's rate falls below half
 * the threshold is dropped when it expires.
 *
 * <p><b>What is never sliced.</b> A decision of several limits (its limits must be decided
 * together, all or nothing, in one script), nor one of a window or log (they do not refill
 * continuously: their state is a count in a window, which a slice of their own would need a
 * window to match).
 *
 * <p>Thread-safe.
 */
final class HotKeys {

    /** The default decisions per second of one caller on this instance from which it is sliced. */
    static final int DEFAULT_THRESHOLD = 500;
    /** A slice is at most the budget's whole requests divided by this (at least one when one fits). */
    static final int SHARE = 4;
    static final int MAX_SLICES = 1024;
    /** The longest a slice lives: what is left of it is given back after this at the latest. */
    static final long MAX_LIFETIME_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How long closing the store waits for the slices' remainders to be given back. */
    private static final long CLOSE_WAIT_MILLIS = 2_000;

    /** Decides requests the usual way: for state slice.lua leaves to decide.lua. */
    interface Direct {
        CompletionStage<Decision> decide(StorageKey key, long deadlineNanos);
    }

    private final SliceScript script;
    private final TimeSource testTime;
    private final Direct direct;
    private final int threshold;
    private final HotSketch sketch;
    private final ConcurrentHashMap<String, Slice> slices = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /**
     * @param threshold decisions per second of one caller on this instance from which it is sliced, at least 1
     * @param testTime  the clock to use instead of the Redis server's, or {@code null} in production
     */
    HotKeys(RedisCalls calls, int threshold, TimeSource testTime, Direct direct) {
        this.script = new SliceScript(calls, testTime);
        this.testTime = testTime;
        this.direct = direct;
        this.threshold = threshold;
        this.sketch = new HotSketch(threshold);
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
            // the caller asks under other limits: the slice goes first
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
            if (!sketch.hot(tag) || closed) {
                return null;
            }
            if (slices.size() >= MAX_SLICES) {
                return null;
            }
            slice = slices.computeIfAbsent(tag, t -> newSlice(key));
            if (!slice.key.sameLimits(key)) {
                return null; // the caller is hot under other limits, which hold its slice
            }
        }
        return slice.decide(deadlineNanos);
    }

    /** A slice of {@code key}'s budget, found under its tag until it is retired. */
    private Slice newSlice(StorageKey key) {
        Slice slice = new Slice(key, script, direct, threshold, new TwinBucket(key.limits.get(0), testTime));
        slice.retired.whenComplete((back, failure) -> slices.remove(key.tag, slice));
        return slice;
    }

    /**
     * Drops the caller's slice, if any, completing once what it held is given back (and any call
     * of it in flight has come back).
     */
    CompletableFuture<Void> retire(String tag) {
        Slice slice = slices.get(tag);
        return slice == null ? CompletableFuture.completedFuture(null) : slice.close();
    }

    /** Gives back what every slice holds, waiting for Redis at most {@value #CLOSE_WAIT_MILLIS} ms. */
    void close() {
        closed = true;
        List<CompletableFuture<?>> returns = new ArrayList<>();
        for (String tag : List.copyOf(slices.keySet())) {
            returns.add(retire(tag));
        }
        try {
            CompletableFuture.allOf(returns.toArray(CompletableFuture[]::new))
                    .get(CLOSE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // Redis is gone or slow: what is not given back comes back as the bucket refills
        }
    }

    /** How many callers hold a slice (for tests). */
    int slices() {
        return slices.size();
    }
}
