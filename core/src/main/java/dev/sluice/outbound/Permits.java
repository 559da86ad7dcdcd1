package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.Lease;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongSupplier;

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
 * <p><b>On time.</b> A provider counts calls when they arrive, and a call sent late crowds the
 * on-time calls after it into the provider's window. So no call is sent more than
 * {@linkplain Builder#maxLateness maxLateness} (by default half the interval between slots, at
 * least 20 ms: 55 ms at {@code 9/s}) after its slot: a call whose slot comes back later (a slow
 * answer from the store, a thread or timer woken late, a pause of the JVM) is not sent on it; that
 * slot, in the past, passes unused. The call keeps its place in this instance's line instead of
 * going to the back of the queue: it takes the next on-time slot of the same key that came to a
 * call of this instance which asked after it (that call takes the next one, and so on), or a new
 * slot of its own if one comes first, within what is left of its wait. Every call still goes on a
 * slot the store granted, one call per slot. The lateness includes the store's round trip (the slot
 * is known only from the store's answer). What to configure for a provider that allows {@code N}
 * calls in any period {@code P}: a limit of {@code c} per {@code P}, burst 1, puts {@code N + 1}
 * consecutive slots {@code N/c} periods apart, which must exceed one period by the spread of the
 * calls' lateness on arrival: {@code maxLateness} plus the jitter of the HTTP path (client,
 * network, the provider's front end). At 90% of the provider's limit ({@code 9/s} for a strict
 * {@code 10/s}) that is 111 ms: 55 for the permits by default, 56 for the path; longer periods
 * leave more ({@code 540/min} for {@code 600/min}: 6.7 s, of which the default takes 55 ms).
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
 * <p><b>Calls in flight.</b> Built with {@linkplain Builder#maxInFlight a cap} {@code n}, at most
 * {@code n} calls per key are in flight to the provider across all instances: a call
 * {@linkplain #enter enters} first, taking a concurrency lease on the same store (its state under
 * the policy name followed by {@code ~inflight}), waiting at most {@link #maxWait()} for one, then
 * waits for its permit, and releases the lease when its response has come, or it failed or was
 * cancelled. A lease is held at most {@linkplain Builder#inFlightLease its lease time}, so one left
 * behind by a dead instance, or by a failure no client reports, frees its place by then. The store
 * keeps no queue of lease waiters: a waiter asks again after a jittered pause of 5 to 50 ms, one
 * round trip each time, and a freed place goes to whichever waiter asks first (no order is
 * promised, and a place knows no {@link Priority}). When the store fails, the limiter's failure
 * mode decides ({@code closed}: fail; {@code open} or {@code local}: go without a lease).
 *
 * <pre>{@code
 * Permits permits = Permits.builder(limiter)
 *         .maxWait(Duration.ofSeconds(5))
 *         .maxInFlight(4)                                 // at most 4 calls in flight, all instances
 *         .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class Permits {

    /** The longest pause a provider's answer imposes unless {@link #withLongestPause} says otherwise. */
    public static final Duration DEFAULT_LONGEST_PAUSE = Duration.ofMinutes(5);

    private final RateLimiter limiter;
    private final Duration maxWait;
    /** {@code null} without a high-priority share: every call books the shared limit alike. */
    private final LowPriorityLane low;
    private final ProviderAnswers answers;
    /** {@code null} without a cap on calls in flight. */
    private final InFlight inFlight;

    /** Sends each call at most {@link #maxLateness()} after its slot. */
    private final OnTime onTime;

    private Permits(RateLimiter limiter, Duration maxWait) {
        this(limiter, maxWait, null, null, null,
                new OnTime(Objects.requireNonNull(limiter, "limiter"), null, System::nanoTime));
    }

    /** {@code answers}: {@code null} for the {@link #DEFAULT_LONGEST_PAUSE}. */
    private Permits(RateLimiter limiter, Duration maxWait, LowPriorityLane low, InFlight inFlight,
                    ProviderAnswers answers, OnTime onTime) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
        this.answers = answers == null ? new ProviderAnswers(limiter, DEFAULT_LONGEST_PAUSE) : answers;
        limiter.checkCanWait(maxWait);
        this.low = low;
        this.inFlight = inFlight;
        this.onTime = onTime;
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
     * @throws InterruptedException       if interrupted while waiting (its reservation is given back)
     */
    public Decision acquire(String key, Priority priority) throws InterruptedException {
        Objects.requireNonNull(priority, "priority");
        if (low == null || priority == Priority.HIGH) {
            return acquire(key);
        }
        return check(key, low.maxWait(), low.acquire(key));
    }

    /** As {@link #acquire(String, Priority)} without blocking a thread; see {@link #acquireAsync(String)}. */
    public CompletableFuture<Decision> acquireAsync(String key, Priority priority) {
        Objects.requireNonNull(priority, "priority");
        if (low == null || priority == Priority.HIGH) {
            return acquireAsync(key);
        }
        CompletableFuture<Decision> reserved = low.acquireAsync(key);
        return givenUpWith(reserved, reserved.thenApply(decision -> check(key, low.maxWait(), decision)));
    }

    /**
     * {@code result}, which completing otherwise first (cancelled, {@code orTimeout},
     * {@code completeOnTimeout}, the caller) cancels {@code reserved}: its reservation is given back
     * and nothing is sent. Once {@code reserved} has its decision, cancelling it does nothing.
     */
    private static CompletableFuture<Decision> givenUpWith(CompletableFuture<Decision> reserved,
                                                           CompletableFuture<Decision> result) {
        result.whenComplete((decision, failure) -> reserved.cancel(false));
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

    /** The longest a {@link Priority#LOW} call waits, lane and shared limit together; else {@link #maxWait()}. */
    public Duration lowPriorityMaxWait() {
        return low == null ? maxWait : low.maxWait();
    }

    /** The most calls per key in flight at once across all instances; 0 without a cap. */
    public int maxInFlight() {
        return inFlight == null ? 0 : inFlight.max();
    }

    /**
     * Waits for a place in flight for a call of {@code key}, at most {@link #maxWait()}: the lease
     * to {@linkplain Lease#release() release} exactly once when the call's response has come, or it
     * failed or was cancelled. Call it before {@link #acquire}, and release the lease if that fails.
     *
     * @return a held lease, or one that {@linkplain Lease#held() holds nothing} when the store
     *         failed and the failure mode is open
     * @throws IllegalStateException      without a cap ({@link #maxInFlight()} is 0)
     * @throws PermitUnavailableException if no place came free within the wait
     * @throws InterruptedException       if interrupted while waiting, for a place or for the store's answer (a
     *                                    place the store grants after it is returned when it comes)
     */
    public Lease enter(String key) throws InterruptedException {
        return capped().enter(key);
    }

    /**
     * As {@link #enter}, blocking no thread between tries. A stage completed otherwise before it
     * has its lease (cancelled, {@code orTimeout}, {@code completeOnTimeout}, the caller) stops
     * asking, and a place granted after, or while it was completed, is released at once: only a
     * lease the stage completes with is the caller's to release.
     */
    public CompletableFuture<Lease> enterAsync(String key) {
        return capped().enterAsync(key);
    }

    private InFlight capped() {
        if (inFlight == null) {
            throw new IllegalStateException("no cap on calls in flight: build the permits with maxInFlight(n), got '"
                    + this + "'");
        }
        return inFlight;
    }

    /**
     * Waits for one permit of {@code key}.
     *
     * @return the limiter's decision, one that {@linkplain Decision#allowed() allows} the call,
     *         returned at most {@link #maxLateness()} after its slot
     * @throws PermitUnavailableException if none could be had within the wait (nothing spent), or
     *                                    none on time (the late slots passed unused)
     * @throws InterruptedException       if interrupted while waiting (its reservation is given back)
     */
    public Decision acquire(String key) throws InterruptedException {
        return check(key, onTime.acquire(key, maxWait));
    }

    /**
     * One permit of {@code key} without blocking a thread; the stage fails with
     * {@link PermitUnavailableException} if none could be had. A stage completed otherwise before
     * its slot (cancelled, {@code orTimeout}, {@code completeOnTimeout}, the caller) is not sent:
     * its reservation is given back (see {@link RateLimiter#acquireAsync}).
     */
    public CompletableFuture<Decision> acquireAsync(String key) {
        CompletableFuture<Decision> reserved = onTime.acquireAsync(key, maxWait);
        return givenUpWith(reserved, reserved.thenApply(decision -> check(key, decision)));
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
        return new Permits(limiter, maxWait, low, inFlight, new ProviderAnswers(limiter, longest), onTime);
    }

    /** The longest pause a provider's answer imposes. */
    public Duration longestPause() {
        return answers.longestPause();
    }

    /**
     * Learns from a provider's answer to a call of {@code key}: a 429 or 503 with
     * {@code Retry-After} (seconds or an HTTP date: IMF-fixdate, RFC 850's or asctime's), or
     * {@code RateLimit} headers saying the budget is spent (the IETF draft's
     * {@code RateLimit: "p";r=0;t=30}, its earlier {@code remaining=0, reset=30}, legacy
     * {@code RateLimit-Remaining: 0} with {@code RateLimit-Reset}, or {@code X-RateLimit-*}; a
     * reset in seconds or as an epoch second, with or without a fraction), pauses {@code key} in
     * the store for every instance ({@link RateLimiter#pause}), at most {@link #longestPause()}.
     * A pause asked for more than a year ahead cannot be meant (an epoch in milliseconds, a broken
     * clock): it is bad input, records no pause, and is logged as a warning once (per {@code Permits}).
     * Headers never grant more than the limiter's limits: budget a provider reports left is
     * ignored. The clients of this package and {@code RateLimitClientFilter} call it for every
     * response.
     *
     * @param header a response header's value by name, whatever its case; {@code null} if absent
     * @return the pause recorded; zero if the answer asked for none
     */
    public Duration learn(String key, int status, Function<String, String> header) {
        Duration pause = answers.requested(key, status, header);
        if (!pause.isZero()) {
            limiter.pause(key, pause);
        }
        return pause;
    }

    /** As {@link #learn} without blocking; the stage never fails. */
    public CompletableFuture<Duration> learnAsync(String key, int status, Function<String, String> header) {
        Duration pause = answers.requested(key, status, header);
        return pause.isZero() ? CompletableFuture.completedFuture(pause)
                : limiter.pauseAsync(key, pause).thenApply(stored -> pause);
    }

    /** The limiter. */
    public RateLimiter limiter() {
        return limiter;
    }

    /** The longest a call waits for its permit. */
    public Duration maxWait() {
        return maxWait;
    }

    /** The latest after its slot a call is sent; see {@link Builder#maxLateness}. */
    public Duration maxLateness() {
        return onTime.maxLateness();
    }

    @Override
    public String toString() {
        return "Permits[" + limiter.name() + " waiting at most " + maxWait.toMillis() + " ms"
                + (low == null ? "" : ", " + low + " waiting at most " + low.maxWait().toMillis() + " ms")
                + (inFlight == null ? "" : ", " + inFlight)
                + ", " + onTime
                + ", pausing at most " + longestPause().toSeconds() + " s]";
    }

    /**
     * Collects a {@link Permits}' settings; validates in {@link #build()}. Not thread-safe; the
     * {@link Permits} it builds are.
     */
    public static final class Builder {
        /** The default {@link #inFlightLease}: one minute. */
        public static final Duration DEFAULT_IN_FLIGHT_LEASE = Duration.ofMinutes(1);

        private final RateLimiter limiter;
        private Duration maxWait;
        /** {@code null}: no priorities. */
        private Double highShare;
        private Duration lowMaxWait;
        /** {@code null}: no cap on calls in flight. */
        private Integer maxInFlight;
        private Duration inFlightLease;
        /** {@code null}: half the shortest interval between slots, see {@link #maxLateness}. */
        private Duration maxLateness;
        private LongSupplier nanoClock = System::nanoTime;

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
         * Caps the calls per key in flight at once, across all instances, at {@code n} (at least
         * 1); a call waits for a place at most {@link #maxWait} (see the class description).
         */
        public Builder maxInFlight(int n) {
            this.maxInFlight = n;
            return this;
        }

        /**
         * The longest a place in flight is held when nobody releases it (an instance that died, a
         * failure the client did not report); default {@link #DEFAULT_IN_FLIGHT_LEASE}. Longer than
         * the slowest call, or a slow call's place is freed while it is still in flight.
         */
        public Builder inFlightLease(Duration lease) {
            this.inFlightLease = Objects.requireNonNull(lease, "inFlightLease");
            return this;
        }

        /**
         * The latest after its slot a call is sent, from 1 ms to 1 hour; by default half the
         * shortest interval between slots of the limiter's limits (55 ms at {@code 9/s}), at least
         * 20 ms, which up to {@code 25/s} is at most half the margin a limit one call per period
         * under a provider's strict limit leaves. Above {@code 25/s}, leave a margin of at least
         * twice the bound (a limit of {@code 1,800/s} against a strict {@code 2,000/s} leaves
         * 111 ms). A call whose slot came back later is not sent on it: it takes a later slot, in
         * its place in this instance's line, within what is left of its wait (see the class
         * description). The lateness counts the store's round
         * trip, so keep it well above the store's usual round trip, or calls fail for want of an
         * on-time slot. Smaller lets the limit come closer to the provider's; larger loses fewer
         * slots on a loaded machine.
         */
        public Builder maxLateness(Duration maxLateness) {
            this.maxLateness = Objects.requireNonNull(maxLateness, "maxLateness");
            return this;
        }

        /** The clock lateness is measured on, in nanoseconds: for tests. */
        Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        /**
         * Builds the policy.
         *
         * @throws IllegalArgumentException naming the setting and its value: no {@code maxWait}, a
         *                                  wait out of range or a sliding log that cannot wait, a
         *                                  share outside (0, 1) or one that leaves the lane less
         *                                  than one unit, a low-priority wait without a share,
         *                                  a {@code maxInFlight} below 1, a lease that is not
         *                                  positive or without a cap, a {@code maxLateness}
         *                                  below 1 ms or above 1 hour
         */
        public Permits build() {
            if (maxWait == null) {
                throw new IllegalArgumentException("Permits need a 'maxWait', the longest a call waits for its permit "
                        + "(e.g. Duration.ofSeconds(5))");
            }
            InFlight inFlight = InFlight.of(limiter, maxInFlight, inFlightLease, maxWait);
            OnTime onTime = new OnTime(limiter, maxLateness, nanoClock);
            if (highShare == null) {
                if (lowMaxWait != null) {
                    throw new IllegalArgumentException("'lowPriorityMaxWait' applies only with priorities; set a "
                            + "'highPriorityShare' too, got '" + lowMaxWait + "'");
                }
                return new Permits(limiter, maxWait, null, inFlight, null, onTime);
            }
            if (!(highShare > 0 && highShare < 1)) {
                throw new IllegalArgumentException("'highPriorityShare' must be a fraction greater than 0 and less "
                        + "than 1 (e.g. 0.3), got '" + highShare + "'");
            }
            LowPriorityLane low = new LowPriorityLane(limiter, highShare, lowMaxWait == null ? maxWait : lowMaxWait,
                    onTime.apart());
            return new Permits(limiter, maxWait, low, inFlight, null, onTime);
        }

    }
}
