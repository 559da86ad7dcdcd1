package dev.sluice;

import dev.sluice.spi.ImmediateStore;
import dev.sluice.internal.Durations;
import dev.sluice.internal.Repeated;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link RateLimiter}'s call to its store: decide a list of limits for a caller, on this thread
 * when the store can ({@link ImmediateStore}). A rejection the store repeated from its local copy
 * is told to the listener. Also the limiter's {@link #reset}. Thread-safe.
 */
final class StoreDecisions implements StoreResilience.Call<List<Limit>, Decision> {

    private final LimiterSettings settings;
    /** The store when it decides on the calling thread; {@code null} otherwise. */
    private final ImmediateStore immediate;
    /** The limiter's policies, as errors name them. */
    private final String policies;
    private final ShadowAndListener shadowAndListener;

    StoreDecisions(LimiterSettings settings, String policies, ShadowAndListener shadowAndListener) {
        this.settings = settings;
        this.immediate = settings.store() instanceof ImmediateStore i ? i : null;
        this.policies = policies;
        this.shadowAndListener = shadowAndListener;
    }

    /** Whether the store decides on the calling thread: {@link StoreResilience#now} is its path. */
    boolean immediate() {
        return immediate != null;
    }

    @Override
    public CompletableFuture<Decision> send(String caller, List<Limit> request, long deadlineNanos, boolean probe) {
        CompletableFuture<Decision> answer = settings.store().decide(caller, request, deadlineNanos, probe)
                .toCompletableFuture();
        if (Repeated.is(answer)) {
            shadowAndListener.localRejection();
        }
        return answer;
    }

    @Override
    public Decision sendNow(String caller, List<Limit> request) {
        return immediate.decideNow(caller, request);
    }

    /**
     * Deletes {@code caller}'s state under {@code limits}, waiting at most the timeout.
     *
     * @throws IllegalStateException if the store failed or did not answer in time
     */
    void reset(String caller, List<Limit> limits) {
        try {
            settings.store().reset(caller, limits).toCompletableFuture()
                    .get(settings.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not reset caller state for policies " + policies + ": "
                    + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("could not reset caller state for policies " + policies
                    + " within " + Durations.formatDuration(settings.timeout()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while resetting caller state for policies " + policies, e);
        }
    }
}
