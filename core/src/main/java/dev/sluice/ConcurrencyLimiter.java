package dev.sluice;

import dev.sluice.internal.Durations;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Caps the requests a caller has in flight: {@link Algorithm#CONCURRENCY}. A request takes a
 * {@link Lease} when it starts and returns it when it completes; while {@code count} leases are
 * held, the next request is refused. Each lease expires {@link Limit#period()} (the lease) after it
 * was taken, so an application instance that dies mid-request leaks nothing for longer.
 *
 * <pre>{@code
 * ConcurrencyLimiter limiter = ConcurrencyLimiter.builder()
 *         .limit(Limit.concurrency("reports", 5, Duration.ofSeconds(30)))
 *         .store(RedisStore.connect("redis://127.0.0.1:6379"))   // default: a MemoryStore
 *         .build();
 * try (Lease lease = limiter.acquire(user)) {
 *     if (!lease.decision().allowed()) {
 *         return tooManyRequests(lease.decision().retryAfter());
 *     }
 *     return render();
 * }
 * }</pre>
 *
 * <p>Taking a lease waits at most the timeout; when the store fails or is late the decision follows
 * the {@link FailureMode} ({@link Decision.Outcome#FAILED_OPEN}: proceed without a lease;
 * {@link Decision.Outcome#FAILED_CLOSED}), a circuit breaker stops waiting after repeated
 * failures, exactly as for a {@link RateLimiter}, and a lease granted after the wait ended is
 * returned as soon as its answer arrives. {@link FailureMode#LOCAL} is refused when the limiter is
 * built: leases are held in the store alone. In shadow mode a refusal becomes
 * {@link Decision.Outcome#SHADOW_REJECTED} and holds no lease. Thread-safe.
 */
public final class ConcurrencyLimiter extends LimiterShell {

    private static final SecureRandom RANDOM = new SecureRandom();

    private final Limit limit;
    private final ShadowAndListener shadowAndListener;
    private final StoreResilience<String, Decision> resilience;
    /** Lease ids: a random prefix per limiter (unique across instances sharing a store) and a counter. */
    private final String idPrefix;
    private final AtomicLong ids = new AtomicLong();
    private final QuietLog log = new QuietLog();

    private ConcurrencyLimiter(Limit limit, LimiterSettings settings) {
        super(settings);
        this.limit = limit;
        this.shadowAndListener = new ShadowAndListener(settings.shadow(), settings.listener(),
                "[" + limit.policy() + "]");
        this.resilience = new StoreResilience<>(new Leases(), StoreResilience.failing(settings.failureMode(), null),
                settings, "concurrency policy " + limit.policy(), shadowAndListener);
        byte[] random = new byte[9];
        RANDOM.nextBytes(random);
        this.idPrefix = HexFormat.of().formatHex(random) + "-";
    }

    /** A builder with the defaults: in-memory store, {@link FailureMode#OPEN}, 100 ms timeout. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Takes a lease for one request of {@code caller}, waiting at most the timeout. Always returns
     * a lease; only one whose decision is {@link Decision.Outcome#ALLOWED} holds a place, which
     * {@link Lease#release()} returns.
     */
    public Lease acquire(String caller) {
        Objects.requireNonNull(caller, "caller");
        long started = System.nanoTime();
        String id = idPrefix + Long.toString(ids.incrementAndGet(), 36);
        return lease(caller, id, resilience.await(caller, id, started), started);
    }

    /**
     * As {@link #acquire}, without blocking a thread: the stage completes within the timeout and
     * never exceptionally; a stage that waited on the store completes on the limiter's executor.
     */
    public CompletionStage<Lease> acquireAsync(String caller) {
        Objects.requireNonNull(caller, "caller");
        long started = System.nanoTime();
        String id = idPrefix + Long.toString(ids.incrementAndGet(), 36);
        CompletableFuture<Lease> result = new CompletableFuture<>();
        Decision atOnce = resilience.ask(caller, id, started, decision -> {
            Lease lease = lease(caller, id, decision, started);
            try {
                settings.executor().execute(() -> result.complete(lease));
            } catch (RejectedExecutionException e) {
                result.complete(lease);
            }
        });
        return atOnce == null ? result : CompletableFuture.completedFuture(lease(caller, id, atOnce, started));
    }

    private Lease lease(String caller, String id, Decision decided, long started) {
        Lease lease = new Lease(this, caller, id, shadowAndListener.apply(decided, started));
        if (lease.held()) {
            shadowAndListener.lease(true);
        }
        return lease;
    }

    /** Taking the lease {@code id} is the call to the store; a lease granted after the wait ended is returned. */
    private final class Leases implements StoreResilience.Call<String, Decision> {
        @Override
        public CompletableFuture<Decision> send(String caller, String id, long deadlineNanos, boolean probe) {
            return settings.store().acquireLease(caller, limit, id).toCompletableFuture();
        }

        @Override
        public void abandoned(String caller, String id, CompletableFuture<Decision> answer, Exception why) {
            // Granted after we stopped waiting, the lease would be held by nobody until it expires.
            answer.thenAccept(late -> {
                if (late.outcome() == Decision.Outcome.ALLOWED) {
                    release(caller, id);
                }
            });
        }
    }

    /** Returns a held lease ({@link Lease#release()}, once): one fewer in flight. */
    void returned(String caller, String id) {
        shadowAndListener.lease(false);
        release(caller, id);
    }

    /** Returns a lease, waiting at most the timeout; a failure is logged, and the lease then expires on its own. */
    void release(String caller, String id) {
        try {
            settings.store().releaseLease(caller, limit, id).toCompletableFuture()
                    .get(settings.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            logReleaseFailure(e.getCause());
        } catch (TimeoutException | RuntimeException e) {
            logReleaseFailure(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            logReleaseFailure(e);
        }
    }

    private void logReleaseFailure(Throwable failure) {
        log.warn("Rate-limit store could not return a lease of concurrency policy {}; it expires within {}: {}",
                limit.policy(), Durations.formatDuration(limit.period()), String.valueOf(failure));
    }

    /** The cap: {@link Limit#count()} leases per caller, each held at most {@link Limit#period()}. */
    public Limit limit() {
        return limit;
    }

    @Override
    StoreResilience<?, ?> resilience() {
        return resilience;
    }

    @Override
    public String toString() {
        return "ConcurrencyLimiter[" + limit + "] failure-mode " + failureMode().configName() + " timeout "
                + Durations.formatDuration(timeout()) + (shadowAndListener.shadow() ? " shadow" : "");
    }

    /**
     * Collects the limit and settings of a {@link ConcurrencyLimiter}; validates in {@link #build()}.
     * The store, failure mode, timeout, shadow mode and listener are set as for every limiter.
     */
    public static final class Builder extends LimiterBuilder<Builder> {
        private Limit limit;

        private Builder() {
        }

        /** The cap, an {@link Algorithm#CONCURRENCY} limit such as {@link Limit#concurrency}; required. */
        public Builder limit(Limit limit) {
            this.limit = Objects.requireNonNull(limit, "limit");
            return this;
        }

        /**
         * Builds the limiter.
         *
         * @throws IllegalArgumentException if the limit is missing or not a concurrency limit, or
         *                                  the failure mode is {@link FailureMode#LOCAL}, naming
         *                                  {@code 'failure-mode'} and the value
         */
        public ConcurrencyLimiter build() {
            if (limit == null || limit.algorithm().isRate()) {
                throw new IllegalArgumentException(
                        "a concurrency limiter needs a 'limit' of algorithm concurrency, got '"
                        + limit + "'");
            }
            if (chosenFailureMode() == FailureMode.LOCAL) {
                throw new IllegalArgumentException("'failure-mode' of concurrency policy '" + limit.policy()
                        + "' must be open or closed: its leases are held in the store alone, so no local limiter can "
                        + "take over while the store fails, got 'local'");
            }
            return new ConcurrencyLimiter(limit, settings());
        }
    }
}
