package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * An outbound policy: a {@link RateLimiter} whose store the application's instances share, and
 * the longest a call waits for its permit. Each call {@link #acquire acquires} one permit of its
 * key (a provider, a host, an account), waiting for its reserved slot; a call that cannot get one
 * within the wait fails with {@link PermitUnavailableException} and is not sent. The clients of
 * this package and {@code dev.sluice.jaxrs.RateLimitClientFilter} call it; it is usable on its own
 * around any client.
 *
 * <pre>{@code
 * Permits permits = Permits.of(RateLimiter.builder()
 *         .limit(Limit.of("payments", "9/s").withBurst(1))
 *         .store(RedisStore.connect("redis://127.0.0.1:6379"))
 *         .build(), Duration.ofSeconds(5));
 * }</pre>
 *
 * <p><b>Priorities.</b> Interactive calls and batch jobs sharing one quota: built with a
 * {@linkplain Builder#highPriorityShare high-priority share} {@code s}, the calls marked
 * {@link Priority#LOW} wait first in a lane of their own (each limit scaled by {@code 1 - s},
 * rounded down; its state under the policy name followed by {@code ~low}) and book the shared
 * limit only once their lane slot has come; {@link Priority#HIGH} calls book the shared limit
 * directly. However long the low-priority backlog, a high-priority call is queued behind at most
 * the lane's burst of low-priority calls, and those whose lane slot came during the last round
 * trip. So while high-priority calls stay within their share (a rate of at most {@code s} of the
 * limit, and bursts no larger than the shared burst minus the lane's), a high-priority call waits
 * no longer than a round trip and a thread's wake-up, whatever waits at low priority. What is
 * promised: every call books the shared limit at its own slot, so the total never exceeds the
 * limit; within a priority, first come first served across all instances; low priority gets up to
 * {@code 1 - s} of the limit and never more, even when no high-priority call waits (the price of
 * never making a high-priority call wait for it); high priority may use the whole limit when low
 * priority leaves it, and beyond its share competes first come first served with the low-priority
 * calls whose lane slot has come. A low-priority call costs two round trips.
 *
 * <pre>{@code
 * Permits permits = Permits.builder(limiter)
 *         .maxWait(Duration.ofSeconds(2))                 // high priority
 *         .highPriorityShare(0.3)                         // low priority: at most 70% of the limit
 *         .lowPriorityMaxWait(Duration.ofMinutes(2))
 *         .build();
 * permits.acquire("payments", Priority.LOW);
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class Permits {

    /** The longest pause a provider's answer imposes unless {@link #withLongestPause} says otherwise. */
    public static final Duration DEFAULT_LONGEST_PAUSE = Duration.ofMinutes(5);

    private static final Logger LOG = LoggerFactory.getLogger(Permits.class);
    /** When a capped pause was last logged: at most one line every ten seconds per policy. */
    private final AtomicLong cappedLogged = new AtomicLong(System.nanoTime() - TimeUnit.SECONDS.toNanos(10));

    private final RateLimiter limiter;
    private final Duration maxWait;
    /** {@code null} without a high-priority share: every call books the shared limit alike. */
    private final LowPriorityLane low;
    private final Duration longestPause;

    private Permits(RateLimiter limiter, Duration maxWait) {
        this(limiter, maxWait, null, DEFAULT_LONGEST_PAUSE);
    }

    private Permits(RateLimiter limiter, Duration maxWait, LowPriorityLane low, Duration longestPause) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
        this.longestPause = Objects.requireNonNull(longestPause, "longestPause");
        limiter.checkCanWait(maxWait);
        this.low = low;
    }

    /**
     * A policy of {@code limiter}'s limits, waiting at most {@code maxWait} per call.
     *
     * @throws IllegalArgumentException if {@code maxWait} is out of range, or above zero while a
     *                                  limit is a sliding log (which cannot wait), naming it
     */
    public static Permits of(RateLimiter limiter, Duration maxWait) {
        return new Permits(limiter, maxWait);
    }

    /** A builder of the policy of {@code limiter}'s limits; {@link Builder#maxWait} is required. */
    public static Builder builder(RateLimiter limiter) {
        return new Builder(Objects.requireNonNull(limiter, "limiter"));
    }

    /**
     * Waits for one permit of {@code key} at {@code priority}: a {@link Priority#LOW} call waits
     * in the low-priority lane first, at most {@link #lowPriorityMaxWait()} in all (see the class
     * description). Without a high-priority share, as {@link #acquire(String)}.
     *
     * @throws PermitUnavailableException if none could be had within the wait (a lane slot taken
     *                                    by then passes unused)
     * @throws InterruptedException       if interrupted while waiting (its slot passes unused)
     */
    public Decision acquire(String key, Priority priority) throws InterruptedException {
        Objects.requireNonNull(priority, "priority");
        if (low == null || priority == Priority.HIGH) {
            return acquire(key);
        }
        return check(key, low.maxWait(), low.acquire(limiter, key));
    }

    /** As {@link #acquire(String, Priority)} without blocking a thread; see {@link #acquireAsync(String)}. */
    public CompletableFuture<Decision> acquireAsync(String key, Priority priority) {
        Objects.requireNonNull(priority, "priority");
        if (low == null || priority == Priority.HIGH) {
            return acquireAsync(key);
        }
        CompletableFuture<Decision> reserved = low.acquireAsync(limiter, key);
        CompletableFuture<Decision> result = reserved.thenApply(decision -> check(key, low.maxWait(), decision));
        result.whenComplete((decision, failure) -> {
            if (result.isCancelled()) {
                reserved.cancel(false);
            }
        });
        return result;
    }

    /** Whether calls of {@link Priority#LOW} wait in a lane of their own: built with a high-priority share. */
    public boolean hasPriorities() {
        return low != null;
    }

    /** The low-priority lane's limits (each shared limit scaled by one minus the share); empty without priorities. */
    public List<Limit> lowPriorityLimits() {
        return low == null ? List.of() : low.limits();
    }

    /** The longest a {@link Priority#LOW} call waits, lane and shared limit together; {@link #maxWait()} without priorities. */
    public Duration lowPriorityMaxWait() {
        return low == null ? maxWait : low.maxWait();
    }

    /**
     * Waits for one permit of {@code key}.
     *
     * @return the limiter's decision, one that {@linkplain Decision#allowed() allows} the call
     * @throws PermitUnavailableException if none could be had within the wait (nothing spent)
     * @throws InterruptedException       if interrupted while waiting (its slot passes unused)
     */
    public Decision acquire(String key) throws InterruptedException {
        return check(key, limiter.acquire(key, maxWait));
    }

    /**
     * One permit of {@code key} without blocking a thread; the stage fails with
     * {@link PermitUnavailableException} if none could be had, and a stage cancelled before its
     * slot is not sent (its slot passes unused; see {@link RateLimiter#acquireAsync}).
     */
    public CompletableFuture<Decision> acquireAsync(String key) {
        CompletableFuture<Decision> reserved = limiter.acquireAsync(key, maxWait);
        CompletableFuture<Decision> result = reserved.thenApply(decision -> check(key, decision));
        // cancelling the caller's stage cancels the reservation's: nothing is sent
        result.whenComplete((decision, failure) -> {
            if (result.isCancelled()) {
                reserved.cancel(false);
            }
        });
        return result;
    }

    private Decision check(String key, Decision decision) {
        return check(key, maxWait, decision);
    }

    private static Decision check(String key, Duration maxWait, Decision decision) {
        if (!decision.allowed()) {
            throw new PermitUnavailableException(key, maxWait, decision);
        }
        return decision;
    }

    /**
     * This policy, pausing for at most {@code longest} when a provider asks for longer (default
     * {@link #DEFAULT_LONGEST_PAUSE}, 5 minutes): a provider sending {@code Retry-After: 86400} by
     * mistake must not stop every instance for a day. A longer request is cut to it and logged as
     * a warning (at most every ten seconds).
     *
     * @throws IllegalArgumentException unless {@code longest} is from 1 second to 1 hour
     */
    public Permits withLongestPause(Duration longest) {
        Objects.requireNonNull(longest, "longest");
        if (longest.compareTo(Duration.ofSeconds(1)) < 0 || longest.compareTo(RateLimiter.LONGEST_WAIT) > 0) {
            throw new IllegalArgumentException("'longest-pause' must be from 1s to 1h, got '" + longest + "'");
        }
        return new Permits(limiter, maxWait, low, longest);
    }

    /** The longest pause a provider's answer imposes. */
    public Duration longestPause() {
        return longestPause;
    }

    /**
     * Learns from a provider's answer to a call of {@code key}: a 429 or 503 with
     * {@code Retry-After} (seconds or an HTTP date), or {@code RateLimit} headers saying the
     * budget is spent (the IETF draft's {@code RateLimit: "p";r=0;t=30}, its earlier
     * {@code remaining=0, reset=30}, legacy {@code RateLimit-Remaining: 0} with
     * {@code RateLimit-Reset}, or {@code X-RateLimit-*}), pauses {@code key} in the store for
     * every instance ({@link RateLimiter#pause}), at most {@link #longestPause()}. Headers never
     * grant more than the limiter's limits: budget a provider reports left is ignored. The
     * clients of this package and {@code RateLimitClientFilter} call it for every response.
     *
     * @param header a response header's value by name, whatever its case; {@code null} if absent
     * @return the pause recorded; zero if the answer asked for none
     */
    public Duration learn(String key, int status, Function<String, String> header) {
        Duration pause = requested(key, status, header);
        if (!pause.isZero()) {
            limiter.pause(key, pause);
        }
        return pause;
    }

    /** As {@link #learn} without blocking; the stage never fails. */
    public CompletableFuture<Duration> learnAsync(String key, int status, Function<String, String> header) {
        Duration pause = requested(key, status, header);
        return pause.isZero() ? CompletableFuture.completedFuture(pause)
                : limiter.pauseAsync(key, pause).thenApply(stored -> pause);
    }

    private Duration requested(String key, int status, Function<String, String> header) {
        Objects.requireNonNull(key, "key");
        Duration pause = ProviderPause.requested(status, header, System.currentTimeMillis());
        if (pause.compareTo(longestPause) > 0) {
            long now = System.nanoTime();
            long last = cappedLogged.get();
            if (now - last >= TimeUnit.SECONDS.toNanos(10) && cappedLogged.compareAndSet(last, now)) {
                // not the key: it may name an account
                LOG.warn("A provider asked policy {} to pause for {} s; pausing for {} s, the longest pause "
                        + "(Permits.withLongestPause)", limiter.name(), pause.toSeconds(), longestPause.toSeconds());
            }
            return longestPause;
        }
        return pause.compareTo(Duration.ofMillis(1)) < 0 ? Duration.ZERO : pause;
    }

    /** The limiter. */
    public RateLimiter limiter() {
        return limiter;
    }

    /** The longest a call waits for its permit. */
    public Duration maxWait() {
        return maxWait;
    }

    @Override
    public String toString() {
        return "Permits[" + limiter.name() + " waiting at most " + maxWait.toMillis() + " ms"
                + (low == null ? "" : ", " + low + " waiting at most " + low.maxWait().toMillis() + " ms")
                + ", pausing at most " + longestPause.toSeconds() + " s]";
    }

    /**
     * Collects a {@link Permits}' settings; validates in {@link #build()}. Not thread-safe; the
     * {@link Permits} it builds are.
     */
    public static final class Builder {
        private final RateLimiter limiter;
        private Duration maxWait;
        /** {@code null}: no priorities. */
        private Double highShare;
        private Duration lowMaxWait;

        private Builder(RateLimiter limiter) {
            this.limiter = limiter;
        }

        /** The longest a call waits for its permit (a high-priority one, with priorities): required. */
        public Builder maxWait(Duration maxWait) {
            this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
            return this;
        }

        /**
         * Turns priorities on: the share of each limit kept for {@link Priority#HIGH} calls, a
         * fraction greater than 0 and less than 1; {@link Priority#LOW} calls together get at most
         * the rest, rounded down to whole units (0.3 of {@code 10/s} leaves {@code 7/s} to them).
         */
        public Builder highPriorityShare(double share) {
            this.highShare = share;
            return this;
        }

        /** The longest a {@link Priority#LOW} call waits, lane and shared limit together; default {@link #maxWait}. */
        public Builder lowPriorityMaxWait(Duration maxWait) {
            this.lowMaxWait = Objects.requireNonNull(maxWait, "lowPriorityMaxWait");
            return this;
        }

        /**
         * Builds the policy.
         *
         * @throws IllegalArgumentException naming the setting and its value: no {@code maxWait}, a
         *                                  wait out of range or a sliding log that cannot wait, a
         *                                  share outside (0, 1) or one that leaves the lane less
         *                                  than one unit, a low-priority wait without a share
         */
        public Permits build() {
            if (maxWait == null) {
                throw new IllegalArgumentException("Permits need a 'maxWait', the longest a call waits for its permit "
                        + "(e.g. Duration.ofSeconds(5))");
            }
            if (highShare == null) {
                if (lowMaxWait != null) {
                    throw new IllegalArgumentException("'lowPriorityMaxWait' applies only with priorities; set a "
                            + "'highPriorityShare' too, got '" + lowMaxWait + "'");
                }
                return new Permits(limiter, maxWait);
            }
            if (!(highShare > 0 && highShare < 1)) {
                throw new IllegalArgumentException("'highPriorityShare' must be a fraction greater than 0 and less than 1 "
                        + "(e.g. 0.3), got '" + highShare + "'");
            }
            return new Permits(limiter, maxWait,
                    new LowPriorityLane(limiter, highShare, lowMaxWait == null ? maxWait : lowMaxWait),
                    DEFAULT_LONGEST_PAUSE);
        }
    }
}
