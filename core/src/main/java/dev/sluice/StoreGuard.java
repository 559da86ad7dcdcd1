package dev.sluice;

import dev.sluice.spi.ImmediateStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.internal.Durations;
import dev.sluice.internal.Repeated;
import dev.sluice.internal.Timeouts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * A limiter's way to its store: the timeout, the circuit breaker, failure counting and logging,
 * and the failure mode. Both paths, blocking and asynchronous, end in one {@link #settle}: the
 * same answer or failure gives the same decision, counts once toward the breaker and once as a
 * store failure. A decision made without the store comes from {@link #fallback} alone, once per
 * request: a request that timed out is decided there once (with {@link FailureMode#LOCAL}, charged
 * once locally), though its script may still have run in the store and charged it there too.
 *
 * <p>Thread-safe. Logs under {@link RateLimiter}'s name, which is the one users configure.
 */
final class StoreGuard {

    private static final Logger LOG = LoggerFactory.getLogger(RateLimiter.class);
    /** What a 503 suggests to the client when the store is down. */
    static final Duration FAILED_CLOSED_RETRY = Duration.ofSeconds(1);
    private static final Decision FAILED_OPEN = new Decision(Decision.Outcome.FAILED_OPEN, List.of(), Duration.ZERO);
    private static final Decision FAILED_CLOSED = new Decision(Decision.Outcome.FAILED_CLOSED, List.of(), FAILED_CLOSED_RETRY);

    private final RateLimitStore store;
    /** The store when it decides on the calling thread ({@link #now}); {@code null} otherwise. */
    private final ImmediateStore immediate;
    private final FailureMode failureMode;
    private final Duration timeout;
    private final long timeoutNanos;
    /** The limiter's policies, as logs and errors name them. */
    private final String policies;
    private final CircuitBreaker breaker;
    /** The limiter of {@link FailureMode#LOCAL}; {@code null} for the other modes. */
    private final LocalLimiter local;
    /** Where a store error is told, once per decision made without the store. */
    private final Announcer announcer;
    private final LongAdder failures = new LongAdder();
    private final QuietLog failureLog = new QuietLog();

    StoreGuard(RateLimitStore store, FailureMode failureMode, Duration timeout, String policies) {
        this(store, failureMode, timeout, policies, 1.0, new Announcer(false, null, policies));
    }

    /**
     * @param localShare the share of each limit the local limiter grants, with {@link FailureMode#LOCAL}
     * @param announcer  tells the limiter's listener of store errors
     */
    StoreGuard(RateLimitStore store, FailureMode failureMode, Duration timeout, String policies, double localShare,
               Announcer announcer) {
        this.announcer = announcer;
        this.local = failureMode == FailureMode.LOCAL ? new LocalLimiter(localShare) : null;
        this.store = store;
        this.immediate = store instanceof ImmediateStore i ? i : null;
        this.failureMode = failureMode;
        this.timeout = timeout;
        this.timeoutNanos = timeout.toNanos();
        this.policies = policies;
        this.breaker = new CircuitBreaker("policies " + policies, announcer);
    }

    /** Decides on the store, waiting on this thread at most the timeout: no timer, no shared scheduler. */
    Decision await(String caller, List<Limit> request, long started) {
        CompletableFuture<Decision> answer = send(caller, request, started);
        if (answer == null) {
            return circuitOpen(caller, request);
        }
        Decision decision = null;
        Throwable failure = null;
        try {
            decision = answer.isDone() ? answer.join() : answer.get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            // Completing the store's future tells a store holding the request back (coalescing)
            // that this caller gave up, so that it is not charged.
            answer.completeExceptionally(e);
            failure = e;
        } catch (ExecutionException | CompletionException | CancellationException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = e;
        }
        return settle(caller, request, started, decision, failure);
    }

    /** Whether the store decides on the calling thread: {@link #now} is its path. */
    boolean immediate() {
        return immediate != null;
    }

    /**
     * Decides on a store that answers on this thread ({@link ImmediateStore}): no future, no
     * deadline, no clock read while it answers. The breaker and the failure mode apply as on the
     * other paths, through the same {@link #settle}: a thrown exception is a failure.
     */
    Decision now(String caller, List<Limit> request) {
        if (!breaker.tryPass()) {
            return circuitOpen(caller, request);
        }
        Decision decision = null;
        RuntimeException failure = null;
        try {
            decision = immediate.decideNow(caller, request);
        } catch (RuntimeException e) {
            failure = e;
        }
        // A failure's time is read when it happens: the breaker counts it by when it was sent,
        // which for a store answering on this thread is a moment ago.
        return settle(caller, request, decision == null || failure != null ? System.nanoTime() : 0, decision, failure);
    }

    /**
     * Decides on the store without blocking. Returns the decision when the store answered at once
     * or the circuit is open. Otherwise returns {@code null}, and {@code later} receives the
     * decision within the timeout, on the store's I/O thread or on the timer's (on this thread if
     * either came before this returned): exactly one of the two, never a failure.
     */
    Decision ask(String caller, List<Limit> request, long started, Consumer<Decision> later) {
        CompletableFuture<Decision> answer = send(caller, request, started);
        if (answer == null) {
            return circuitOpen(caller, request);
        }
        if (answer.isDone()) {
            return answer.handle((decision, failure) -> settle(caller, request, started, decision, failure)).join();
        }
        // The store's own future times out, so that a store holding requests back (coalescing) can
        // see that a caller gave up before its turn and not charge it. Sluice's timer, not the
        // JDK's orTimeout, whose JVM-global thread would pin the first web application (see Timeouts).
        Timeouts.orTimeout(answer, timeoutNanos)
                .whenComplete((decision, failure) -> later.accept(settle(caller, request, started, decision, failure)));
        return null;
    }

    /**
     * The store's answer; a failed future if the store threw; {@code null} while the circuit is
     * open. The circuit's probe must reach the store itself, not a copy kept in this JVM.
     */
    private CompletableFuture<Decision> send(String caller, List<Limit> request, long started) {
        boolean probe = breaker.isOpen();
        if (!breaker.tryPass()) {
            return null;
        }
        try {
            CompletableFuture<Decision> answer = store.decide(caller, request, started + timeoutNanos, probe).toCompletableFuture();
            if (Repeated.is(answer)) {
                announcer.localRejection();
            }
            return answer;
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Turns the store's answer, or its failure, into a decision: the one place both paths meet.
     * A store that completes without a decision has failed too; one that could not read this
     * caller's state fails this request alone (see {@link CircuitBreaker#onFailure(long, Throwable)}).
     */
    Decision settle(String caller, List<Limit> request, long started, Decision answer, Throwable failure) {
        if (failure == null && answer != null) {
            breaker.onSuccess();
            if (local != null) {
                local.storeAnswered();
            }
            return answer;
        }
        Throwable cause = failure == null ? new NullPointerException("the store answered no decision") : unwrap(failure);
        breaker.onFailure(started, cause);
        failures.increment();
        announcer.storeError(StoreError.of(cause));
        if (failureLog.due()) {
            LOG.warn("Rate-limit store failed or exceeded {} ms; failing {} for policies {} ({} failures so far): {}",
                    timeout.toMillis(), failureMode.configName(), policies, failures.sum(), cause.toString());
        }
        return fallback(caller, request);
    }

    private static Throwable unwrap(Throwable failure) {
        boolean wrapper = failure instanceof CompletionException || failure instanceof ExecutionException
                || failure instanceof CancellationException;
        return wrapper && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** The circuit is open: no wait, no log (the breaker logged the opening); still a failure. */
    private Decision circuitOpen(String caller, List<Limit> request) {
        failures.increment();
        announcer.storeError(StoreError.CIRCUIT_OPEN);
        return fallback(caller, request);
    }

    /** The decision made without the store, following the failure mode: the one place that decides so. */
    private Decision fallback(String caller, List<Limit> request) {
        return switch (failureMode) {
            case OPEN -> FAILED_OPEN;
            case CLOSED -> FAILED_CLOSED;
            case LOCAL -> local.decide(caller, request);
        };
    }

    /** The limits the local limiter decides for {@code request}; empty unless the failure mode is {@link FailureMode#LOCAL}. */
    List<Limit> localLimits(List<Limit> request) {
        return local == null ? List.of() : local.limits(request);
    }

    /** Whether the local limiter holds state now. */
    boolean holdsLocalState() {
        return local != null && local.holdsState();
    }

    /**
     * Deletes {@code caller}'s state under {@code limits}, waiting at most the timeout.
     *
     * @throws IllegalStateException if the store failed or did not answer in time
     */
    void reset(String caller, List<Limit> limits) {
        try {
            store.reset(caller, limits).toCompletableFuture().get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not reset caller state for policies " + policies + ": "
                    + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("could not reset caller state for policies " + policies
                    + " within " + Durations.formatDuration(timeout), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while resetting caller state for policies " + policies, e);
        }
    }

    RateLimitStore store() {
        return store;
    }

    FailureMode failureMode() {
        return failureMode;
    }

    Duration timeout() {
        return timeout;
    }

    boolean circuitOpen() {
        return breaker.isOpen();
    }

    long failures() {
        return failures.sum();
    }
}
