package dev.sluice;

import dev.sluice.spi.ImmediateStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.internal.Timeouts;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Every limiter's way to its store: readiness, the timeout and the circuit breaker around a
 * {@link Call} that says what is asked of the store (a decision, a lease), and a {@link Fallback}
 * that answers without it, by the failure mode ({@link StoreFailures} counts and logs those
 * answers). Both paths, blocking and asynchronous, end in one {@link #settle}: the same answer or
 * failure gives the same result, counts once toward the breaker and once as a store failure. A
 * result made without the store comes from the fallback alone, once per request: a request that
 * timed out is decided there once
 * (with {@link FailureMode#LOCAL}, charged once locally), though the store may still have done it
 * too.
 *
 * <p>A store that is not ready yet (connecting at start-up, see {@link RateLimitStore#whenReady})
 * is waited for before the request is sent, and the timeout counts from the moment it is ready:
 * a blocking request waits on its own thread, an asynchronous one is sent when the store's stage
 * completes, blocking no thread. A store that cannot get ready is a failure like any other.
 *
 * <p>Thread-safe. Logs under {@link RateLimiter}'s name, which is the one users configure.
 *
 * @param <A> what a call asks about besides the caller (the limits, a lease id)
 * @param <T> what the store answers (a {@link Decision})
 */
final class StoreResilience<A, T> {

    /** What a 503 suggests to the client when the store is down. */
    static final Duration FAILED_CLOSED_RETRY = Duration.ofSeconds(1);
    private static final Decision FAILED_OPEN = new Decision(Decision.Outcome.FAILED_OPEN, List.of(), Duration.ZERO);
    private static final Decision FAILED_CLOSED =
            new Decision(Decision.Outcome.FAILED_CLOSED, List.of(), FAILED_CLOSED_RETRY);

    /** What a limiter asks of its store. */
    interface Call<A, T> {
        /**
         * Sends the request; may throw, which is a failure like a failed future.
         *
         * @param deadlineNanos when the caller stops waiting, on {@link System#nanoTime()}'s clock
         * @param probe         whether this is the circuit's probe, which must reach the store itself
         */
        CompletableFuture<T> send(String caller, A request, long deadlineNanos, boolean probe);

        /** Answers on this thread, for a store that can ({@link ImmediateStore}); see {@link StoreResilience#now}. */
        default T sendNow(String caller, A request) {
            throw new UnsupportedOperationException("this store answers later");
        }

        /**
         * The caller stopped waiting for {@code answer}: at the timeout, or interrupted. By default
         * the answer is completed with {@code why}, which tells a store holding the request back
         * (coalescing) that the caller gave up, so that it is not charged, and whoever completes
         * the answer later that nobody took what it brings.
         */
        default void abandoned(String caller, A request, CompletableFuture<T> answer, Exception why) {
            answer.completeExceptionally(why);
        }
    }

    /** The answer made without the store, following the failure mode. */
    interface Fallback<A, T> {
        T decide(String caller, A request);

        /** The store answered; a fallback holding state of its own may drop it. */
        default void storeAnswered() {
        }
    }

    private final Call<A, T> call;
    private final StoreFailures<A, T> failures;
    private final RateLimitStore store;
    private final Duration timeout;
    private final long timeoutNanos;
    private final CircuitBreaker breaker;

    /**
     * @param fallback  the answer without the store, for {@code settings}' failure mode
     * @param name      the limiter, as logs name it
     * @param shadowAndListener tells the limiter's listener of store errors and circuit changes
     */
    StoreResilience(Call<A, T> call, Fallback<A, T> fallback, LimiterSettings settings, String name,
                    ShadowAndListener shadowAndListener) {
        this.call = call;
        this.failures = new StoreFailures<>(Objects.requireNonNull(fallback, "fallback"), settings, name,
                shadowAndListener);
        this.store = settings.store();
        this.timeout = settings.timeout();
        this.timeoutNanos = timeout.toNanos();
        this.breaker = new CircuitBreaker(name, shadowAndListener);
    }

    /**
     * The fallback of failure mode {@code open} ({@link Decision.Outcome#FAILED_OPEN}) or
     * {@code closed} ({@link Decision.Outcome#FAILED_CLOSED}); {@code local} for
     * {@link FailureMode#LOCAL}, which a limiter that cannot decide locally refuses when it is built.
     */
    static <A> Fallback<A, Decision> failing(FailureMode mode, Fallback<A, Decision> local) {
        return switch (mode) {
            case OPEN -> (caller, request) -> FAILED_OPEN;
            case CLOSED -> (caller, request) -> FAILED_CLOSED;
            case LOCAL -> Objects.requireNonNull(local, "a local fallback");
        };
    }

    /** Asks the store, waiting on this thread at most the timeout: no timer, no shared scheduler. */
    T await(String caller, A request, long started) {
        CompletableFuture<Void> ready = notReady();
        if (ready != null) {
            Throwable unready = awaitReady(ready);
            if (unready != null) {
                return settle(caller, request, started, null, unready);
            }
            started = System.nanoTime(); // the timeout is the store's, once it is ready
        }
        CompletableFuture<T> answer = send(caller, request, started);
        if (answer == null) {
            return circuitOpen(caller, request);
        }
        T result = null;
        Throwable failure = null;
        try {
            result = answer.isDone() ? answer.join() : answer.get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            call.abandoned(caller, request, answer, e);
            failure = e;
        } catch (ExecutionException | CompletionException | CancellationException e) {
            failure = e;
        } catch (InterruptedException e) {
            // Given up as at a timeout; the interrupt stays for the caller, who may throw it.
            call.abandoned(caller, request, answer, e);
            Thread.currentThread().interrupt();
            failure = e;
        }
        return settle(caller, request, started, result, failure);
    }

    /**
     * Asks a store that answers on this thread ({@link Call#sendNow}): no future, no deadline, no
     * clock read while it answers. The breaker and the failure mode apply as on the other paths,
     * through the same {@link #settle}: a thrown exception is a failure.
     */
    T now(String caller, A request) {
        if (!breaker.tryPass()) {
            return circuitOpen(caller, request);
        }
        T result = null;
        RuntimeException failure = null;
        try {
            result = call.sendNow(caller, request);
        } catch (RuntimeException e) {
            failure = e;
        }
        // A failure's time is read when it happens: the breaker counts it by when it was sent,
        // which for a store answering on this thread is a moment ago.
        return settle(caller, request, result == null || failure != null ? System.nanoTime() : 0, result, failure);
    }

    /**
     * Asks the store without blocking. Returns the result when the store answered at once or the
     * circuit is open. Otherwise returns {@code null}, and {@code later} receives the result within
     * the timeout, on the store's I/O thread or on the timer's (on this thread if either came
     * before this returned): exactly one of the two, never a failure.
     */
    T ask(String caller, A request, long started, Consumer<T> later) {
        CompletableFuture<Void> ready = notReady();
        if (ready != null) {
            // Sent from the thread that makes the store ready (or the store's timer): no thread waits.
            ready.whenComplete((ok, unready) -> {
                if (unready != null) {
                    later.accept(settle(caller, request, started, null, unready));
                    return;
                }
                T atOnce = ask(caller, request, System.nanoTime(), later);
                if (atOnce != null) {
                    later.accept(atOnce);
                }
            });
            return null;
        }
        CompletableFuture<T> answer = send(caller, request, started);
        if (answer == null) {
            return circuitOpen(caller, request);
        }
        if (answer.isDone()) {
            return answer.handle((result, failure) -> settle(caller, request, started, result, failure)).join();
        }
        // The store's own future times out, so that a store holding requests back (coalescing) can
        // see that a caller gave up before its turn and not charge it. Sluice's timer, not the
        // JDK's orTimeout, whose JVM-global thread would pin the first web application (see Timeouts).
        Timeouts.orTimeout(answer, timeoutNanos)
                .whenComplete((result, failure) -> later.accept(settle(caller, request, started, result, failure)));
        return null;
    }

    /** {@code null} if the store is ready; else its stage (see {@link RateLimitStore#whenReady}). */
    private CompletableFuture<Void> notReady() {
        try {
            CompletionStage<Void> ready = store.whenReady(timeout);
            return ready == null ? null : ready.toCompletableFuture();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Waits on this thread until the store is ready, which the store bounds (the larger of the
     * timeout and its start-up bound); the failure if it did not get ready, else {@code null}.
     */
    private static Throwable awaitReady(CompletableFuture<Void> ready) {
        try {
            ready.get();
            return null;
        } catch (ExecutionException | CancellationException e) {
            return e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return e;
        }
    }

    /**
     * The store's answer; a failed future if the call threw; {@code null} while the circuit is
     * open. The circuit's probe must reach the store itself, not a copy kept in this JVM.
     */
    private CompletableFuture<T> send(String caller, A request, long started) {
        boolean probe = breaker.isOpen();
        if (!breaker.tryPass()) {
            return null;
        }
        try {
            return call.send(caller, request, started + timeoutNanos, probe);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Turns the store's answer, or its failure, into a result: the one place every path meets.
     * A store that completes without an answer has failed too; one that could not read this
     * caller's state fails this request alone (see {@link CircuitBreaker#onFailure(long, Throwable)}).
     */
    private T settle(String caller, A request, long started, T answer, Throwable failure) {
        if (failure == null && answer != null) {
            breaker.onSuccess();
            failures.storeAnswered();
            return answer;
        }
        Throwable cause = failure == null ? new NullPointerException("the store answered nothing") : unwrap(failure);
        if (cause instanceof InterruptedException) {
            // The caller was interrupted; the store did not fail: nothing counted, nothing logged.
            return failures.interrupted(caller, request);
        }
        breaker.onFailure(started, cause);
        return failures.failed(caller, request, cause);
    }

    private static Throwable unwrap(Throwable failure) {
        boolean wrapper = failure instanceof CompletionException || failure instanceof ExecutionException
                || failure instanceof CancellationException;
        return wrapper && failure.getCause() != null ? failure.getCause() : failure;
    }

    private T circuitOpen(String caller, A request) {
        return failures.circuitOpen(caller, request);
    }

    /** Whether the circuit is open: results follow the failure mode at once, one probe at a time retries. */
    boolean circuitOpen() {
        return breaker.isOpen();
    }

    /** How many results were made without the store (errors, timeouts, an open circuit). */
    long failures() {
        return failures.count();
    }
}
