package dev.sluice;

import dev.sluice.internal.Durations;
import dev.sluice.internal.Timeouts;
import dev.sluice.memory.MemoryStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

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
 * late, the decision follows the {@link FailureMode} ({@link Decision.Outcome#FAILED_OPEN} or
 * {@link Decision.Outcome#FAILED_CLOSED}), the failure is counted and logged at most once every
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

    private static final Logger LOG = LoggerFactory.getLogger(RateLimiter.class);
    private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** What a 503 suggests to the client when the store is down. */
    static final Duration FAILED_CLOSED_RETRY = Duration.ofSeconds(1);
    /** CompletableFuture's own default for async work: the common pool unless it has one thread. */
    private static final Executor DEFAULT_EXECUTOR = new CompletableFuture<Void>().defaultExecutor();

    private final List<Limit> limits;
    private final RateLimitStore store;
    private final FailureMode failureMode;
    private final Duration timeout;
    private final long timeoutNanos;
    private final long smallestCapacity;
    private final LongAdder storeFailures = new LongAdder();
    private final CircuitBreaker breaker;
    private final boolean shadow;
    private final DecisionListener listener;
    private final AtomicLong lastShadowLog = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NANOS);
    private final LongAdder shadowRejections = new LongAdder();
    private final AtomicLong lastFailureLog = new AtomicLong(System.nanoTime() - LOG_INTERVAL_NANOS);
    private final Executor executor;

    private RateLimiter(Builder builder) {
        this.limits = List.copyOf(builder.limits);
        this.store = builder.store != null ? builder.store : MemoryStore.create();
        this.failureMode = builder.failureMode;
        this.timeout = builder.timeout;
        this.timeoutNanos = builder.timeout.toNanos();
        this.smallestCapacity = limits.stream().mapToLong(Limit::capacity).min().orElseThrow();
        this.breaker = new CircuitBreaker("policies " + policies());
        this.shadow = builder.shadow;
        this.listener = builder.listener;
        this.executor = builder.executor;
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
        return await(caller, limits);
    }

    /** Decides one request of {@code caller} that spends {@code cost} units of every limit. */
    public Decision decide(String caller, long cost) {
        List<Limit> request = costed(cost);
        return request == null ? unsatisfiable() : await(caller, request);
    }

    /**
     * Decides one request of {@code caller} without blocking, spending each limit's configured
     * cost. The stage never completes exceptionally: store failures become decisions following
     * the failure mode, and the stage completes within the timeout.
     */
    public CompletionStage<Decision> decideAsync(String caller) {
        return ask(caller, limits);
    }

    /**
     * As {@link #decideAsync(String)}, spending {@code cost} units of every limit. A cost above
     * some limit's capacity is {@link Decision.Outcome#UNSATISFIABLE} at once, without touching
     * the store.
     *
     * @throws IllegalArgumentException if {@code cost} is below 1
     */
    public CompletionStage<Decision> decideAsync(String caller, long cost) {
        List<Limit> request = costed(cost);
        return request == null ? CompletableFuture.completedFuture(unsatisfiable()) : ask(caller, request);
    }

    /** The limits with {@code cost}, or {@code null} if some limit can never grant it. */
    private List<Limit> costed(long cost) {
        if (cost < 1) {
            throw new IllegalArgumentException("'cost' must be at least 1, got '" + cost + "'");
        }
        if (cost > smallestCapacity) {
            return null;
        }
        List<Limit> costed = new ArrayList<>(limits.size());
        for (Limit limit : limits) {
            costed.add(limit.cost() == cost ? limit : limit.withCost(cost));
        }
        return costed;
    }

    private Decision unsatisfiable() {
        return heard(new Decision(Decision.Outcome.UNSATISFIABLE, List.of(), Decision.NEVER), System.nanoTime());
    }

    private Decision await(String caller, List<Limit> request) {
        long started = System.nanoTime();
        CompletableFuture<Decision> answer = send(caller, request, started);
        if (answer == null) {
            return heard(circuitOpen(), started);
        }
        try {
            Decision decision = answer.isDone() ? answer.join() : answer.get(timeoutNanos, TimeUnit.NANOSECONDS);
            breaker.onSuccess();
            return heard(decision, started);
        } catch (TimeoutException e) {
            // Completing the store's future tells a store holding the request back (coalescing)
            // that this caller gave up, so that it is not charged.
            answer.completeExceptionally(e);
            return heard(failed(e, started), started);
        } catch (ExecutionException | CompletionException | CancellationException e) {
            return heard(failed(e.getCause() != null ? e.getCause() : e, started), started);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return heard(failed(e, started), started);
        }
    }

    private CompletionStage<Decision> ask(String caller, List<Limit> request) {
        long started = System.nanoTime();
        CompletableFuture<Decision> answer = send(caller, request, started);
        if (answer == null) {
            return CompletableFuture.completedFuture(heard(circuitOpen(), started));
        }
        if (answer.isDone()) {
            return CompletableFuture.completedFuture(completed(answer, started));
        }
        // The store's own future times out, so that a store holding requests back (coalescing) can
        // see that a caller gave up before its turn and not charge it. Sluice's timer, not the
        // JDK's orTimeout, whose JVM-global thread would pin the first web application (see Timeouts).
        CompletableFuture<Decision> result = new CompletableFuture<>();
        Timeouts.orTimeout(answer, timeoutNanos).whenComplete((decision, failure) -> {
            Decision settled;
            if (failure != null) {
                settled = heard(failed(failure, started), started);
            } else {
                breaker.onSuccess();
                settled = heard(decision, started);
            }
            // This thread is the store's I/O thread or the timer's: the caller's continuations,
            // which may block, run on the executor instead.
            try {
                executor.execute(() -> result.complete(settled));
            } catch (RejectedExecutionException e) {
                result.complete(settled);
            }
        });
        return result;
    }

    /** An answer that is already complete, as a decision. */
    private Decision completed(CompletableFuture<Decision> done, long started) {
        try {
            Decision decision = done.join();
            breaker.onSuccess();
            return heard(decision, started);
        } catch (CompletionException | CancellationException e) {
            return heard(failed(e.getCause() != null ? e.getCause() : e, started), started);
        }
    }

    /**
     * The store's answer; a failed future if the store threw; {@code null} while the circuit is
     * open. The circuit's probe must reach the store itself, not a copy kept in this JVM.
     */
    private CompletableFuture<Decision> send(String caller, List<Limit> request, long started) {
        Objects.requireNonNull(caller, "caller");
        boolean probe = breaker.isOpen();
        if (!breaker.tryPass()) {
            return null;
        }
        try {
            return store.decide(caller, request, started + timeoutNanos, probe).toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private Decision circuitOpen() {
        storeFailures.increment();
        return failureDecision();
    }

    /** Applies shadow mode and tells the listener. */
    private Decision heard(Decision decision, long started) {
        Decision result = decision;
        if (shadow && (decision.outcome() == Decision.Outcome.REJECTED || decision.outcome() == Decision.Outcome.UNSATISFIABLE)) {
            result = new Decision(Decision.Outcome.SHADOW_REJECTED, decision.quotas(), decision.retryAfter());
            shadowRejections.increment();
            long now = System.nanoTime();
            long last = lastShadowLog.get();
            if (now - last >= LOG_INTERVAL_NANOS && lastShadowLog.compareAndSet(last, now)) {
                LOG.info("Shadow mode: policies {} would have rejected a request ({} so far); it was let through",
                        policies(), shadowRejections.sum());
            }
        }
        if (listener != null) {
            try {
                listener.onDecision(result, System.nanoTime() - started);
            } catch (RuntimeException e) {
                LOG.debug("A decision listener failed", e);
            }
        }
        return result;
    }

    private Decision failed(Throwable failure, long started) {
        breaker.onFailure(started);
        storeFailures.increment();
        long now = System.nanoTime();
        long last = lastFailureLog.get();
        if (now - last >= LOG_INTERVAL_NANOS && lastFailureLog.compareAndSet(last, now)) {
            LOG.warn("Rate-limit store failed or exceeded {} ms; failing {} for policies {} ({} failures so far): {}",
                    timeout.toMillis(), failureMode.configName(), policies(), storeFailures.sum(), failure.toString());
        }
        return failureDecision();
    }

    private Decision failureDecision() {
        return failureMode == FailureMode.OPEN
                ? new Decision(Decision.Outcome.FAILED_OPEN, List.of(), Duration.ZERO)
                : new Decision(Decision.Outcome.FAILED_CLOSED, List.of(), FAILED_CLOSED_RETRY);
    }

    private List<String> policies() {
        return limits.stream().map(Limit::policy).toList();
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
        Objects.requireNonNull(caller, "caller");
        try {
            store.reset(caller, limits).toCompletableFuture().get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not reset caller state for policies " + policies() + ": "
                    + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("could not reset caller state for policies " + policies()
                    + " within " + Durations.formatDuration(timeout), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while resetting caller state for policies " + policies(), e);
        }
    }

    /** Whether this limiter only reports rejections ({@link Decision.Outcome#SHADOW_REJECTED}) instead of making them. */
    public boolean shadowMode() {
        return shadow;
    }

    /** How many requests shadow mode let through that would have been rejected. */
    public long shadowRejections() {
        return shadowRejections.sum();
    }

    /** The limits, in the order their quotas appear in decisions. */
    public List<Limit> limits() {
        return limits;
    }

    /** The store this limiter decides on. */
    public RateLimitStore store() {
        return store;
    }

    /** What a decision does when the store fails or is late. */
    public FailureMode failureMode() {
        return failureMode;
    }

    /** The longest a decision waits on the store. */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Whether this limiter has stopped waiting on its store after repeated failures: while open,
     * decisions follow the failure mode at once, and one probe at a time retries the store.
     */
    public boolean storeCircuitOpen() {
        return breaker.isOpen();
    }

    /**
     * How many decisions were made without the store (errors, timeouts, an open circuit) since this
     * limiter was built.
     */
    public long storeFailures() {
        return storeFailures.sum();
    }

    /** The limiter's policy names joined with {@code +}: how metrics and logs name it. */
    public String name() {
        return String.join("+", policies());
    }

    @Override
    public String toString() {
        return "RateLimiter" + limits + " failure-mode " + failureMode.configName() + " timeout "
                + Durations.formatDuration(timeout) + (shadow ? " shadow" : "");
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

        private Builder() {
        }

        /**
         * Where the stages returned by {@code decideAsync} are completed when the decision had to
         * wait for the store, so where the caller's continuations run: never on the store's I/O
         * thread or the timer thread. Default: the executor of {@link CompletableFuture}'s async
         * methods (the common pool, or a thread per task where the pool has a single thread). A
         * continuation that blocks belongs on an executor of its own; an executor that rejects
         * the task makes the completing thread run it.
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

        /** The store; default a new {@link MemoryStore}. */
        public Builder store(RateLimitStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /** What a decision does when the store fails or is late; default {@link FailureMode#OPEN}. */
        public Builder failureMode(FailureMode failureMode) {
            this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
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
                if (!seen.add(limit.policy())) {
                    throw new IllegalArgumentException("'policy' '" + limit.policy()
                            + "' is used by two limits of one limiter; give each limit its own policy name");
                }
            }
            return new RateLimiter(this);
        }
    }
}
