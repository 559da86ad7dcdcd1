package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.internal.Durations;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.stream.Collectors;

/**
 * Decides whether a caller may spend units now, against one or several {@link Limit}s held in a
 * {@link RateLimitStore}. All limits are decided together: nothing is consumed unless all allow.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.builder()
 *         .limit(Limit.of("api", "10/s").withBurst(20))
 *         .limit(Limit.of("api-hourly", "1000/1h"))
 *         .store(RedisStore.connect("redis://127.0.0.1:6379"))   // default: a MemoryStore
 *         .failureMode(FailureMode.OPEN)                         // default
 *         .timeout(Duration.ofMillis(100))                       // default
 *         .build();
 * Decision decision = limiter.decide(apiKey);
 * }</pre>
 *
 * <p>A decision never waits longer than the timeout on the store: when the store fails or is
 * late, the decision follows the {@link FailureMode} ({@link Decision.Outcome#FAILED_OPEN},
 * {@link Decision.Outcome#FAILED_CLOSED}, or a local limiter's {@link Decision.Outcome#LOCAL_ALLOWED}
 * or {@link Decision.Outcome#LOCAL_REJECTED}), the failure is counted and logged at most once every
 * ten seconds. After five failures in a row a circuit breaker stops waiting on the store
 * altogether and probes it again after a short pause. A store that is not ready yet (a Redis store
 * connecting at start-up) is waited for first, as it bounds ({@link RateLimitStore#whenReady}),
 * and the timeout counts from then. Instances are thread-safe; closing the store is the owner's
 * business.
 *
 * <p>A blocking {@link #decide} waits on its own thread, bounded by the timeout. The stage of an
 * asynchronous decision that waited on its store is completed on the limiter's
 * {@linkplain Builder#executor executor}, never on the store's I/O thread or on the timer thread, so
 * a continuation that blocks delays no other decision. An asynchronous
 * decision that waits on its store is timed out by one daemon thread, {@code sluice-timeouts},
 * shared by the limiters of Sluice's class loader; it ends after two seconds without pending
 * decisions, so a web application leaves no thread behind (it is not the JDK's JVM-global
 * {@code CompletableFuture.orTimeout} thread, which would keep the first application's class loader).
 */
public final class RateLimiter extends LimiterShell {

    private static final Decision UNSATISFIABLE =
            new Decision(Decision.Outcome.UNSATISFIABLE, List.of(), Decision.NEVER);

    private final CostedLimits costed;
    private final StoreDecisions store;
    private final StoreResilience<List<Limit>, Decision> resilience;
    private final Reservations reservations;
    private final ShadowAndListener shadowAndListener;
    /** The limiter of {@link FailureMode#LOCAL}; {@code null} for the other modes. */
    private final LocalLimiter local;
    private final List<Limit> localLimits;
    private final Refunds refunds;
    private final Pauses pauses;
    /** Whether a listener hears each decision's latency: only then does an immediate store's decision read time. */
    private final boolean timed;

    private RateLimiter(List<Limit> limits, LimiterSettings settings) {
        super(settings);
        this.costed = new CostedLimits(limits);
        String policies = costed.configured().stream().map(Limit::policy).toList().toString();
        this.shadowAndListener = new ShadowAndListener(settings.shadow(), settings.listener(), policies);
        this.store = new StoreDecisions(settings, policies, shadowAndListener);
        this.local = settings.failureMode() == FailureMode.LOCAL ? new LocalLimiter(settings.localShare()) : null;
        this.resilience = new StoreResilience<>(store, StoreResilience.failing(settings.failureMode(), local), settings,
                "policies " + policies, shadowAndListener);
        // built now: a scaled limit that is invalid fails here
        this.localLimits = local == null ? List.of() : local.limits(costed.configured());
        this.refunds = new Refunds(settings.store(), settings.timeout(), policies, shadowAndListener);
        this.reservations = new Reservations(settings, policies, local, refunds, shadowAndListener);
        this.pauses = new Pauses(settings.store(), local, settings.timeout(), policies);
        this.timed = settings.listener() != null;
    }

    /** A builder with the defaults: in-memory store, {@link FailureMode#OPEN}, 100 ms timeout. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Decides one request of {@code caller}, spending each limit's configured {@link Limit#cost()}.
     * Waits at most the timeout, on this thread: no timer, no shared scheduler.
     */
    public Decision decide(String caller) {
        return await(caller, costed.configured());
    }

    /** Decides one request of {@code caller} that spends {@code cost} units of every limit. */
    public Decision decide(String caller, long cost) {
        List<Limit> request = costed.withCost(cost);
        return request == null ? shadowAndListener.apply(UNSATISFIABLE, System.nanoTime()) : await(caller, request);
    }

    /**
     * Decides one request of {@code caller} without blocking, spending each limit's configured
     * cost. The stage never completes exceptionally: store failures become decisions following
     * the failure mode, and the stage completes within the timeout.
     */
    public CompletionStage<Decision> decideAsync(String caller) {
        return ask(caller, costed.configured());
    }

    /**
     * As {@link #decideAsync(String)}, spending {@code cost} units of every limit. A cost above
     * some limit's capacity is {@link Decision.Outcome#UNSATISFIABLE} at once, without touching
     * the store.
     *
     * @throws IllegalArgumentException if {@code cost} is below 1
     */
    public CompletionStage<Decision> decideAsync(String caller, long cost) {
        List<Limit> request = costed.withCost(cost);
        return request == null
                ? CompletableFuture.completedFuture(shadowAndListener.apply(UNSATISFIABLE, System.nanoTime()))
                : ask(caller, request);
    }

    /**
     * Waits until {@code caller} may spend each limit's configured cost, at most {@code maxWait};
     * see {@link #acquire(String, long, Duration)}.
     */
    public Decision acquire(String caller, Duration maxWait) throws InterruptedException {
        return reserveAndWait(caller, costed.configured(), maxWait);
    }

    /**
     * Waits until {@code caller} may spend {@code cost} units of every limit, at most
     * {@code maxWait}: for calls this application makes to a rate-limited provider, shared by
     * every instance on the same store. One round trip reserves the earliest slot within
     * {@code maxWait} atomically in the store ({@link RateLimitStore#reserve}) and spends the
     * units; waiters are served in the order they reach the store, across all instances, with no
     * retries, and this thread then sleeps until its slot.
     *
     * <p>The answer: {@link Decision.Outcome#ALLOWED} once the slot has come, its
     * {@link Decision#retryAfter()} the wait it reserved; {@link Decision.Outcome#REJECTED} at once,
     * nothing spent, when no slot is free within {@code maxWait} (its retry-after the wait it would
     * need); {@link Decision.Outcome#UNSATISFIABLE} for a cost above a limit's capacity. When the
     * store fails or is late the failure mode decides: {@link FailureMode#OPEN} goes at once
     * ({@link Decision.Outcome#FAILED_OPEN}), {@link FailureMode#CLOSED} fails at once
     * ({@link Decision.Outcome#FAILED_CLOSED}), {@link FailureMode#LOCAL} waits on this JVM's
     * local share ({@link Decision.Outcome#LOCAL_ALLOWED} after its wait, or
     * {@link Decision.Outcome#LOCAL_REJECTED}). Proceed when {@link Decision#allowed()}.
     *
     * @param maxWait from zero (only what {@link #decide} would allow now) to {@link #LONGEST_WAIT};
     *                above zero only if no limit is a {@link Algorithm#SLIDING_LOG} (see {@link #checkCanWait})
     * @throws InterruptedException if interrupted while waiting for the slot, which is then given
     *                              back (see {@link #acquireAsync(String, long, Duration)}) before
     *                              this throws, waiting at most the timeout; or while waiting for
     *                              the store's answer: never let through by the failure mode, and
     *                              a slot the store books after it is given back when it comes
     * @throws IllegalArgumentException if {@code cost} is below 1 or {@code maxWait} out of range
     */
    public Decision acquire(String caller, long cost, Duration maxWait) throws InterruptedException {
        List<Limit> request = costed.withCost(cost);
        return request == null ? shadowAndListener.apply(UNSATISFIABLE, System.nanoTime())
                : reserveAndWait(caller, request, maxWait);
    }

    /** As {@link #acquireAsync(String, long, Duration)}, spending each limit's configured cost. */
    public CompletableFuture<Decision> acquireAsync(String caller, Duration maxWait) {
        return reserveLater(caller, costed.configured(), maxWait);
    }

    /**
     * As {@link #acquire(String, long, Duration)} without blocking a thread while it waits: the
     * reservation is one asynchronous store call, and the stage completes when the slot comes,
     * on the limiter's {@linkplain Builder#executor executor}, from Sluice's timer (no thread sleeps;
     * fine with virtual threads). A stage completed otherwise before its slot (cancelled, completed
     * by the caller, {@code orTimeout}) does not send, and its reservation is given back to the
     * store (or to the local limiter that made it) without blocking the thread that completed it
     * ({@link RateLimitStore#giveBack}): its slot goes to a later reservation, and the quota used
     * is what was sent. Store failures become decisions following the failure mode, as for
     * {@link #acquire(String, long, Duration)}.
     *
     * @throws IllegalArgumentException if {@code cost} is below 1 or {@code maxWait} out of range
     */
    public CompletableFuture<Decision> acquireAsync(String caller, long cost, Duration maxWait) {
        List<Limit> request = costed.withCost(cost);
        if (request == null) {
            checkCanWait(maxWait);
            return CompletableFuture.completedFuture(shadowAndListener.apply(UNSATISFIABLE, System.nanoTime()));
        }
        return reserveLater(caller, request, maxWait);
    }

    /** The longest {@code maxWait} {@link #acquire(String, long, Duration)} accepts: one hour. */
    public static final Duration LONGEST_WAIT = RateLimitStore.LONGEST_WAIT;

    private static Duration checkWait(Duration maxWait) {
        Objects.requireNonNull(maxWait, "maxWait");
        if (maxWait.isNegative() || maxWait.compareTo(LONGEST_WAIT) > 0) {
            throw new IllegalArgumentException("'maxWait' must be from 0 to 1h, got '" + maxWait + "'");
        }
        return maxWait;
    }

    /**
     * Throws unless every limit can wait ({@link Algorithm#SLIDING_LOG} cannot, see
     * {@link RateLimitStore#reserve}) or {@code maxWait} is zero.
     *
     * @throws IllegalArgumentException naming the limit
     */
    public void checkCanWait(Duration maxWait) {
        checkWait(maxWait);
        if (maxWait.isZero()) {
            return;
        }
        for (Limit limit : limits()) {
            if (limit.algorithm() == Algorithm.SLIDING_LOG) {
                throw new IllegalArgumentException("'algorithm' sliding-log cannot wait for a permit (it would have "
                        + "to stamp entries ahead); acquire with maxWait 0 or use token-bucket, gcra, sliding-window "
                        + "or fixed-window, got '" + limit + "'");
            }
        }
    }

    private Decision reserveAndWait(String caller, List<Limit> request, Duration maxWait) throws InterruptedException {
        Objects.requireNonNull(caller, "caller");
        checkCanWait(maxWait);
        return reservations.await(caller, request, maxWait);
    }

    private CompletableFuture<Decision> reserveLater(String caller, List<Limit> request, Duration maxWait) {
        Objects.requireNonNull(caller, "caller");
        checkCanWait(maxWait);
        return reservations.later(caller, request, maxWait);
    }

    private Decision await(String caller, List<Limit> request) {
        Objects.requireNonNull(caller, "caller");
        if (store.immediate()) {
            // Nothing to wait for, so no deadline: the clock is read only for a listener.
            long started = timed ? System.nanoTime() : 0;
            return shadowAndListener.apply(resilience.now(caller, request), started);
        }
        long started = System.nanoTime();
        return shadowAndListener.apply(resilience.await(caller, request, started), started);
    }

    private CompletionStage<Decision> ask(String caller, List<Limit> request) {
        Objects.requireNonNull(caller, "caller");
        if (store.immediate()) {
            return CompletableFuture.completedFuture(await(caller, request));
        }
        long started = System.nanoTime();
        CompletableFuture<Decision> result = new CompletableFuture<>();
        // Whether the decision waited is known when it is sent, not from whether it is done by the
        // time we look: a timeout that fires while this thread is descheduled must not complete the
        // stage here, on the caller's thread, instead of on the executor.
        Decision atOnce = resilience.ask(caller, request, started, decision -> {
            Decision announced = shadowAndListener.apply(decision, started);
            // This thread is the store's I/O thread or the timer's: the caller's continuations,
            // which may block, run on the executor instead.
            try {
                settings.executor().execute(() -> result.complete(announced));
            } catch (RejectedExecutionException e) {
                result.complete(announced);
            }
        });
        return atOnce == null ? result : CompletableFuture.completedFuture(shadowAndListener.apply(atOnce, started));
    }

    /**
     * Deletes {@code caller}'s state under this limiter's limits, in the store and in any copy this
     * JVM keeps of it (the Redis store's local rejections): the caller's next request starts with
     * every budget whole. Other callers are untouched. For support tools and tests; waits at most
     * the timeout.
     *
     * @throws IllegalStateException if the store failed or did not answer in time; the state may
     *                               or may not be gone, and resetting again is harmless
     */
    public void reset(String caller) {
        store.reset(Objects.requireNonNull(caller, "caller"), costed.configured());
    }

    /**
     * Gives back what one {@link Decision.Outcome#ALLOWED} request of {@code caller} spent (each
     * limit's configured cost), atomically in the store: for charging only the requests that
     * turn out to count ({@code charge=after}: decide up front, refund once the response shows
     * the request was not a failure). Never above an untouched caller's budget, never another
     * caller's; see {@link RateLimitStore#refund}. Waits at most the timeout.
     *
     * @return whether the store confirmed the refund in time; if not (logged at most every ten
     *         seconds), the request may stay charged
     */
    public boolean refund(String caller) {
        return refunds.refund(Objects.requireNonNull(caller, "caller"), costed.configured());
    }

    /** As {@link #refund(String)}, for a request decided with {@link #decide(String, long)}. */
    public boolean refund(String caller, long cost) {
        List<Limit> request = costed.withCost(cost);
        return request != null && refunds.refund(Objects.requireNonNull(caller, "caller"), request);
    }

    /**
     * Holds every limit's budget of {@code caller} spent for {@code pause} from now, in the store,
     * so that every instance sharing it stops granting until the pause ends, then grants again at
     * the limits' own pace, without a burst ({@link RateLimitStore#pause}): for a provider that
     * answered "slow down". It never grants anything, and with {@link FailureMode#LOCAL} the local
     * share is paused too. Waits at most the timeout.
     *
     * @param pause from 1 µs to {@link #LONGEST_WAIT}
     * @return whether the store confirmed the pause in time; if not (logged at most every ten
     *         seconds), only this JVM's local share, if any, is paused
     * @throws IllegalArgumentException if {@code pause} is out of range
     */
    public boolean pause(String caller, Duration pause) {
        try {
            return pauseAsync(caller, pause).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (java.util.concurrent.ExecutionException e) {
            return false; // never: the stage does not fail
        }
    }

    /** As {@link #pause(String, Duration)} without blocking: the stage never fails. */
    public CompletableFuture<Boolean> pauseAsync(String caller, Duration pause) {
        return pauses.pause(Objects.requireNonNull(caller, "caller"), costed.configured(), pause);
    }

    /** Whether this limiter only reports rejections ({@link Decision.Outcome#SHADOW_REJECTED}), not makes them. */
    public boolean shadowMode() {
        return shadowAndListener.shadow();
    }

    /** How many requests shadow mode let through that would have been rejected. */
    public long shadowRejections() {
        return shadowAndListener.shadowRejections();
    }

    /** The limits, in the order their quotas appear in decisions. */
    public List<Limit> limits() {
        return costed.configured();
    }

    /** The share of each limit this JVM grants alone while the store fails, with {@link FailureMode#LOCAL}. */
    public double localShare() {
        return settings.localShare();
    }

    /**
     * The limits of {@link FailureMode#LOCAL}'s local limiter, in the order of {@link #limits()}:
     * each count and burst scaled by the local share (see {@link Builder#localShare}); empty for
     * the other failure modes.
     */
    public List<Limit> localLimits() {
        return localLimits;
    }

    /**
     * A limiter of other limits sharing this one's store and settings: failure mode, timeout,
     * shadow mode, local share, listener and executor. Its circuit breaker, failure count and local
     * limiter are its own. For limits chosen per request among a few built once (plans, tiers):
     * build the limiter once per list, not per request.
     *
     * @throws IllegalArgumentException as {@link Builder#build()} does
     */
    public RateLimiter withLimits(List<Limit> limits) {
        return new RateLimiter(Builder.check(limits), settings);
    }

    /**
     * As {@link #withLimits(List)}, heard by {@code listener} instead of this limiter's listener
     * ({@code null}: none): for metrics named after each list's policies.
     *
     * @throws IllegalArgumentException as {@link Builder#build()} does
     */
    public RateLimiter withLimits(List<Limit> limits, DecisionListener listener) {
        return new RateLimiter(Builder.check(limits), settings.withListener(listener));
    }

    /** The limiter's policy names joined with {@code +}: how metrics and logs name it. */
    public String name() {
        return limits().stream().map(Limit::policy).collect(Collectors.joining("+"));
    }

    @Override
    StoreResilience<?, ?> resilience() {
        return resilience;
    }

    @Override
    public String toString() {
        return "RateLimiter" + limits() + " failure-mode " + failureMode().configName()
                + (localLimits.isEmpty() ? "" : " locally " + localLimits) + " timeout "
                + Durations.formatDuration(timeout()) + (shadowMode() ? " shadow" : "");
    }

    /**
     * Collects the limits and settings of a {@link RateLimiter}; validates in {@link #build()}. The
     * store, failure mode, timeout, shadow mode and listener are set as for every limiter.
     */
    public static final class Builder extends LimiterBuilder<Builder> {
        private final List<Limit> limits = new ArrayList<>();

        private Builder() {
        }

        /**
         * Where the stages returned by {@code decideAsync} are completed when the decision had to
         * wait for the store, so where the caller's continuations run: never on the store's I/O
         * thread or the timer thread. Default: pooled daemon threads of Sluice's,
         * {@code sluice-completions}, a new one only when none is free (so a continuation that
         * blocks holds up no other), each ending after two idle seconds. A continuation that
         * blocks for long still belongs on an executor of its own; an executor that rejects the
         * task makes the completing thread run it.
         */
        public Builder executor(Executor executor) {
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** Adds a limit; all limits are decided together. */
        public Builder limit(Limit limit) {
            limits.add(Objects.requireNonNull(limit, "limit"));
            return this;
        }

        /** Adds limits; all limits are decided together. */
        public Builder limits(List<Limit> more) {
            more.forEach(this::limit);
            return this;
        }

        /**
         * With {@link FailureMode#LOCAL}, the share of each limit this JVM grants on its own while the
         * store fails: a fraction greater than 0 and at most 1; each count and burst is multiplied by
         * it and rounded to the nearest integer, at least 1 (e.g. 0.33 with three instances keeps
         * their total near the limit). Default 1.0; ignored by the other failure modes.
         *
         * @throws IllegalArgumentException naming {@code 'local-share'} and the value
         */
        public Builder localShare(double share) {
            this.localShare = LocalLimiter.checkShare(share);
            return this;
        }

        /**
         * Builds the limiter.
         *
         * @throws IllegalArgumentException if there is no limit or two limits share a policy name
         */
        public RateLimiter build() {
            return new RateLimiter(check(limits), settings());
        }

        /** {@code limits}, copied, if a rate limiter can decide them together. */
        private static List<Limit> check(List<Limit> limits) {
            if (limits.isEmpty()) {
                throw new IllegalArgumentException("a rate limiter needs at least one 'limit'");
            }
            Set<String> seen = new HashSet<>();
            for (Limit limit : limits) {
                if (!limit.algorithm().isRate()) {
                    throw new IllegalArgumentException("'algorithm' concurrency caps requests in flight and is decided "
                            + "by a ConcurrencyLimiter, not a RateLimiter, got '" + limit + "'");
                }
                if (!seen.add(limit.policy())) {
                    throw new IllegalArgumentException("'policy' '" + limit.policy()
                            + "' is used by two limits of one limiter; give each limit its own policy name");
                }
            }
            return List.copyOf(limits);
        }
    }
}
