package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The limiter of {@link FailureMode#LOCAL}: decides in this JVM, on an in-memory store of its own,
 * while the limiter's store cannot (an error, a timeout, an open circuit).
 *
 * <p><b>Scaling.</b> Each limit keeps its policy, algorithm and period; its count and burst are
 * multiplied by the local share and rounded to the nearest integer (halves up), at least 1, so
 * that N instances with a share of 1/N together admit about the limit ({@code 10/1m} at 0.33 is
 * {@code 3/1m} per instance). A request's cost is capped at the scaled capacity: a request that a
 * small local budget could never hold spends all of it rather than being refused forever.
 *
 * <p><b>Lifetime.</b> The local state is created by the first local decision and kept while it is
 * used. It is dropped when the store answers after having answered, since the last local
 * decision, for as long as the slowest local limit needs to restore a whole budget (a bucket's
 * time to refill from empty, a sliding window's two periods, one period otherwise): by then every
 * local state equals an absent one, so dropping it changes no decision, while a store that fails
 * again sooner (a flapping store) finds each caller's local spending remembered instead of
 * handing out a fresh local budget per failure.
 *
 * <p>Thread-safe. The scaled limits of each list of limits the limiter asks for (one per cost)
 * are built once; a local decision is a cache lookup and a decision of the memory store.
 */
final class LocalLimiter implements StoreResilience.Fallback<List<Limit>, Decision> {

    /** As many lists as the limiter's costed lists can be at once, and one more for the configured list. */
    private static final long SCALED_LISTS = CostedLimits.ARRAY_COSTS + CostedLimits.CACHED_COSTS + 1;

    private final double share;
    /**
     * Request list -> its scaled list; weak keys compare by identity, as the limiter hands out one
     * list per cost. A list that scaling leaves unchanged is its own value, which keeps it
     * reachable: the size bound, not the collector, limits those entries.
     */
    private final Cache<List<Limit>, List<Limit>> scaled;
    private final AtomicReference<RateLimitStore> memory = new AtomicReference<>();
    /** How long the store must have answered before the local state can go; raised by each new list. */
    private volatile long keepNanos;
    private volatile long lastUsedNanos;

    /**
     * @param share the local share, as {@link #checkShare} accepts it
     */
    LocalLimiter(double share) {
        this.share = checkShare(share);
        this.scaled = Caffeine.newBuilder().weakKeys().maximumSize(SCALED_LISTS).executor(Runnable::run).build();
    }

    /**
     * Throws unless {@code share} is a fraction greater than 0 and at most 1.
     *
     * @throws IllegalArgumentException naming {@code 'local-share'} and the value
     */
    static double checkShare(double share) {
        if (!(share > 0 && share <= 1)) {
            throw new IllegalArgumentException(
                    "'local-share' must be a fraction greater than 0 and at most 1 (e.g. 0.33), got '"
                    + share + "'");
        }
        return share;
    }

    /** The limits the local limiter decides for {@code request}: the same instance every time. */
    List<Limit> limits(List<Limit> request) {
        return scaled.get(request, this::scale);
    }

    /**
     * Decides one request in this JVM; always {@link Decision.Outcome#LOCAL_ALLOWED} or
     * {@link Decision.Outcome#LOCAL_REJECTED}.
     */
    @Override
    public Decision decide(String caller, List<Limit> request) {
        List<Limit> limits = limits(request);
        // The memory store decides synchronously and never fails.
        return local(memory().decide(caller, limits).toCompletableFuture().join());
    }

    /**
     * Reserves one request in this JVM at most {@code ahead} ahead, on the local share
     * ({@link RateLimitStore#book}); {@link Decision.Outcome#LOCAL_ALLOWED} with the wait as its
     * retry-after, or {@link Decision.Outcome#LOCAL_REJECTED}, and where it ends the local schedule.
     */
    RateLimitStore.Booking book(String caller, List<Limit> request, java.time.Duration ahead) {
        List<Limit> limits = limits(request);
        RateLimitStore.Booking booked = memory().book(caller, limits, ahead).toCompletableFuture().join();
        return new RateLimitStore.Booking(local(booked.decision()), booked.ends());
    }

    /** Pauses the local share as the store is paused ({@link RateLimitStore#pause}). */
    void pause(String caller, List<Limit> request, java.time.Duration pause) {
        memory().pause(caller, limits(request), pause).toCompletableFuture().join();
    }

    /**
     * Returns a local reservation given up by its waiter ({@link RateLimitStore#giveBack}); nothing if there is no
     * local state.
     */
    void giveBack(String caller, List<Limit> request, RateLimitStore.Booking booking) {
        RateLimitStore store = memory.get();
        if (store != null) {
            store.giveBack(caller, limits(request), booking).toCompletableFuture().join();
        }
    }

    private static Decision local(Decision decision) {
        return new Decision(decision.outcome() == Decision.Outcome.ALLOWED ? Decision.Outcome.LOCAL_ALLOWED
                : Decision.Outcome.LOCAL_REJECTED, decision.quotas(), decision.retryAfter());
    }

    /** The local store, created by the first local decision. */
    private RateLimitStore memory() {
        // Before the store is read: a concurrent storeAnswered sees this use and keeps the state.
        lastUsedNanos = System.nanoTime();
        RateLimitStore store = memory.get();
        if (store == null) {
            RateLimitStore fresh = StoreProvider.forStore("memory").open("memory");
            store = memory.compareAndExchange(null, fresh);
            if (store == null) {
                store = fresh;
            } else {
                fresh.close();
            }
        }
        return store;
    }

    /**
     * The store answered: drops the local state once it has answered for {@link #keepNanos} since
     * the last local decision. One volatile read while there is no local state.
     */
    @Override
    public void storeAnswered() {
        RateLimitStore store = memory.get();
        if (store != null && System.nanoTime() - lastUsedNanos >= keepNanos && memory.compareAndSet(store, null)) {
            store.close();
        }
    }

    /** Whether local state is held now (for tests and monitoring). */
    boolean holdsState() {
        return memory.get() != null;
    }

    private List<Limit> scale(List<Limit> request) {
        long keep = keepNanos;
        List<Limit> out = new ArrayList<>(request.size());
        boolean same = true;
        for (Limit limit : request) {
            Limit local = scale(limit, share);
            same &= local == limit;
            out.add(local);
            keep = Math.max(keep, wholeAgainNanos(local));
        }
        keepNanos = keep;
        return same ? request : List.copyOf(out);
    }

    /** {@code limit} with its count and burst scaled by {@code share} (see the class description). */
    static Limit scale(Limit limit, double share) {
        long count = Math.max(1, Math.round(limit.count() * share));
        long burst = limit.algorithm().hasBurst() ? Math.max(1, Math.round(limit.burst() * share)) : count;
        long cost = Math.min(limit.cost(), limit.algorithm().hasBurst() ? burst : count);
        if (count == limit.count() && burst == limit.burst() && cost == limit.cost()) {
            return limit;
        }
        return new Limit(limit.policy(), limit.algorithm(), count, limit.period(), burst, cost);
    }

    /** The longest a state of {@code limit} can differ from an absent one, in nanoseconds, saturated. */
    private static long wholeAgainNanos(Limit limit) {
        double micros = switch (limit.algorithm()) {
            case TOKEN_BUCKET, GCRA -> Math.ceil((double) limit.burst() * limit.periodMicros() / limit.count()) + 1;
            case SLIDING_WINDOW -> 2.0 * limit.periodMicros();
            case FIXED_WINDOW, SLIDING_LOG -> limit.periodMicros();
            case CONCURRENCY -> limit.periodMicros(); // a lease; a RateLimiter never holds one
        };
        return micros * 1_000 >= Long.MAX_VALUE ? Long.MAX_VALUE : (long) (micros * 1_000);
    }
}
