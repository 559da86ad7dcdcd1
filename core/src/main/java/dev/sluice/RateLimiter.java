package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import dev.sluice.internal.Completions;
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
 * altogether and probes it again after a short pause. Instances are thread-safe; closing the
 * store is the owner's business.
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
public final class RateLimiter {

    /** Pooled threads, a new one only when none is free (see {@link Completions} for why not the JDK's default). */
    private static final Executor DEFAULT_EXECUTOR = Completions.EXECUTOR;
    private static final Decision UNSATISFIABLE = new Decision(Decision.Outcome.UNSATISFIABLE, List.of(), Decision.NEVER);

    private final CostedLimits costed;
    private final StoreGuard guard;
    private final Announcer announcer;
    private final Executor executor;
    private final DecisionListener listener;
    private final List<Limit> localLimits;
    private final double localShare;
    private final Refunds refunds;
    /** Whether a listener hears each decision's latency: only then does a decision on an immediate store read the clock. */
    private final boolean timed;

    private RateLimiter(Builder builder) {
        this.costed = new CostedLimits(builder.limits);
        String policies = costed.configured().stream().map(Limit::policy).toList().toString();
        RateLimitStore store = builder.store != null ? builder.store : StoreProvider.forStore("memory").open("memory");
        this.announcer = new Announcer(builder.shadow, builder.listener, policies);
        this.guard = new StoreGuard(store, builder.failureMode, builder.timeout, policies, builder.localShare, announcer);
        this.localShare = builder.localShare;
        this.localLimits = guard.localLimits(costed.configured()); // built now: a scaled limit that is invalid fails here
        this.executor = builder.executor;
        this.listener = builder.listener;
        this.refunds = new Refunds(store, builder.timeout, policies, announcer);
        this.timed = builder.listener != null;
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
        return request == null ? announcer.announce(UNSATISFIABLE, System.nanoTime()) : await(caller, request);
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
                ? CompletableFuture.completedFuture(announcer.announce(UNSATISFIABLE, System.nanoTime()))
                : ask(caller, request);
    }

    private Decision await(String caller, List<Limit> request) {
        Objects.requireNonNull(caller, "caller");
        if (guard.immediate()) {
            // Nothing to wait for, so no deadline: the clock is read only for a listener.
            long started = timed ? System.nanoTime() : 0;
            return announcer.announce(guard.now(caller, request), started);
        }
        long started = System.nanoTime();
        return announcer.announce(guard.await(caller, request, started), started);
    }

    private CompletionStage<Decision> ask(String caller, List<Limit> request) {
        Objects.requireNonNull(caller, "caller");
        if (guard.immediate()) {
            return CompletableFuture.completedFuture(await(caller, request));
        }
        long started = System.nanoTime();
        CompletableFuture<Decision> result = new CompletableFuture<>();
        // Whether the decision waited is known when it is sent, not from whether it is done by the
        // time we look: a timeout that fires while this thread is descheduled must not complete the
        // stage here, on the caller's thread, instead of on the executor.
        Decision atOnce = guard.ask(caller, request, started, decision -> {
            Decision announced = announcer.announce(decision, started);
            // This thread is the store's I/O thread or the timer's: the caller's continuations,
            // which may block, run on the executor instead.
            try {
                executor.execute(() -> result.complete(announced));
            } catch (RejectedExecutionException e) {
                result.complete(announced);
            }
        });
        return atOnce == null ? result : CompletableFuture.completedFuture(announcer.announce(atOnce, started));
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
        guard.reset(Objects.requireNonNull(caller, "caller"), costed.configured());
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

    /** Whether this limiter only reports rejections ({@link Decision.Outcome#SHADOW_REJECTED}) instead of making them. */
    public boolean shadowMode() {
        return announcer.shadow();
    }

    /** How many requests shadow mode let through that would have been rejected. */
    public long shadowRejections() {
        return announcer.shadowRejections();
    }

    /** The limits, in the order their quotas appear in decisions. */
    public List<Limit> limits() {
        return costed.configured();
    }

    /** The store this limiter decides on. */
    public RateLimitStore store() {
        return guard.store();
    }

    /** What a decision does when the store fails or is late. */
    public FailureMode failureMode() {
        return guard.failureMode();
    }

    /** The share of each limit this JVM grants alone while the store fails, with {@link FailureMode#LOCAL}. */
    public double localShare() {
        return localShare;
    }

    /**
     * The limits of {@link FailureMode#LOCAL}'s local limiter, in the order of {@link #limits()}:
     * each count and burst scaled by the local share (see {@link Builder#localShare}); empty for
     * the other failure modes.
     */
    public List<Limit> localLimits() {
        return localLimits;
    }

    /** The longest a decision waits on the store. */
    public Duration timeout() {
        return guard.timeout();
    }

    /**
     * Whether this limiter has stopped waiting on its store after repeated failures: while open,
     * decisions follow the failure mode at once, and one probe at a time retries the store.
     */
    public boolean storeCircuitOpen() {
        return guard.circuitOpen();
    }

    /**
     * How many decisions were made without the store (errors, timeouts, an open circuit) since this
     * limiter was built.
     */
    public long storeFailures() {
        return guard.failures();
    }

    /**
     * A limiter of other limits with every setting of this one: store, failure mode, timeout,
     * shadow mode, local share, listener and executor. For limits chosen per request among a few
     * built once (plans, tiers): build the limiter once per list, not per request.
     *
     * @throws IllegalArgumentException as {@link Builder#build()} does
     */
    public RateLimiter withLimits(List<Limit> limits) {
        return builder().limits(limits).store(store()).failureMode(failureMode()).timeout(timeout())
                .shadowMode(shadowMode()).localShare(localShare()).listener(listener).executor(executor).build();
    }

    /** The limiter's policy names joined with {@code +}: how metrics and logs name it. */
    public String name() {
        return limits().stream().map(Limit::policy).collect(Collectors.joining("+"));
    }

    @Override
    public String toString() {
        return "RateLimiter" + limits() + " failure-mode " + failureMode().configName()
                + (localLimits.isEmpty() ? "" : " locally " + localLimits) + " timeout "
                + Durations.formatDuration(timeout()) + (shadowMode() ? " shadow" : "");
    }

    /** Collects the limits and settings of a {@link RateLimiter}; validates in {@link #build()}. */
    public static final class Builder {
        private final List<Limit> limits = new ArrayList<>();
        private RateLimitStore store;
        private FailureMode failureMode = FailureMode.OPEN;
        private Duration timeout = Durations.DEFAULT_TIMEOUT;
        private boolean shadow;
        private DecisionListener listener;
        private Executor executor = DEFAULT_EXECUTOR;
        private double localShare = 1.0;

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

        /**
         * Shadow mode: decide and count as usual, but let every request through; a rejection that
         * would have happened becomes {@link Decision.Outcome#SHADOW_REJECTED}, consumes nothing,
         * and is counted and logged (at most every ten seconds). The way to roll out a limit safely.
         * Default off.
         */
        public Builder shadowMode(boolean shadow) {
            this.shadow = shadow;
            return this;
        }

        /** Hears every decision, e.g. {@link dev.sluice.metrics.MicrometerMetrics}; default none. */
        public Builder listener(DecisionListener listener) {
            this.listener = listener;
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

        /** The store; default a new {@link dev.sluice.memory.MemoryStore}. */
        public Builder store(RateLimitStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /** What a decision does when the store fails or is late; default {@link FailureMode#OPEN}. */
        public Builder failureMode(FailureMode failureMode) {
            this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
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

        /** The longest a decision may wait on the store, from 1 ms to 1 minute; default 100 ms. */
        public Builder timeout(Duration timeout) {
            this.timeout = Durations.checkTimeout(timeout);
            return this;
        }

        /**
         * Builds the limiter.
         *
         * @throws IllegalArgumentException if there is no limit or two limits share a policy name
         */
        public RateLimiter build() {
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
            return new RateLimiter(this);
        }
    }
}
