package dev.sluice;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import dev.sluice.internal.Durations;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

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
 * the {@link FailureMode} ({@link Decision.Outcome#FAILED_OPEN}: proceed without a lease), a
 * circuit breaker stops waiting after repeated failures, and a lease granted after the wait ended
 * is returned as soon as its answer arrives. In shadow mode a refusal becomes
 * {@link Decision.Outcome#SHADOW_REJECTED} and holds no lease. Thread-safe.
 */
public final class ConcurrencyLimiter {

    private static final Decision FAILED_OPEN = new Decision(Decision.Outcome.FAILED_OPEN, List.of(), Duration.ZERO);
    private static final Decision FAILED_CLOSED = new Decision(Decision.Outcome.FAILED_CLOSED, List.of(),
            StoreGuard.FAILED_CLOSED_RETRY);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Limit limit;
    private final RateLimitStore store;
    private final FailureMode failureMode;
    private final Duration timeout;
    private final CircuitBreaker breaker;
    private final Announcer announcer;
    /** Lease ids: a random prefix per limiter (unique across instances sharing a store) and a counter. */
    private final String idPrefix;
    private final AtomicLong ids = new AtomicLong();
    private final LongAdder failures = new LongAdder();
    private final QuietLog log = new QuietLog();

    private ConcurrencyLimiter(Builder builder) {
        this.limit = builder.limit;
        this.store = builder.store != null ? builder.store : StoreProvider.forStore("memory").open("memory");
        this.failureMode = builder.failureMode;
        this.timeout = builder.timeout;
        this.announcer = new Announcer(builder.shadow, builder.listener, "[" + limit.policy() + "]");
        this.breaker = new CircuitBreaker("concurrency policy " + limit.policy(), announcer);
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
        Decision decision;
        if (!breaker.tryPass()) {
            failures.increment();
            announcer.storeError(StoreError.CIRCUIT_OPEN);
            decision = fallback();
        } else {
            decision = await(caller, id, started);
        }
        Lease lease = new Lease(this, caller, id, announcer.announce(decision, started));
        if (lease.held()) {
            announcer.lease(true);
        }
        return lease;
    }

    private Decision await(String caller, String id, long started) {
        CompletableFuture<Decision> answer;
        try {
            answer = store.acquireLease(caller, limit, id).toCompletableFuture();
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        Throwable failure;
        try {
            Decision decision = answer.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            breaker.onSuccess();
            return decision;
        } catch (TimeoutException e) {
            // Granted after we stopped waiting, the lease would be held by nobody until it expires.
            answer.thenAccept(late -> {
                if (late.outcome() == Decision.Outcome.ALLOWED) {
                    release(caller, id);
                }
            });
            failure = e;
        } catch (ExecutionException e) {
            failure = e.getCause();
        } catch (CancellationException e) {
            failure = e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = e;
        }
        breaker.onFailure(started, failure);
        failures.increment();
        announcer.storeError(StoreError.of(failure));
        log.warn("Rate-limit store failed or exceeded {} ms; failing {} for concurrency policy {} ({} failures so far): {}",
                timeout.toMillis(), failureMode.configName(), limit.policy(), failures.sum(), String.valueOf(failure));
        return fallback();
    }

    private Decision fallback() {
        return failureMode == FailureMode.CLOSED ? FAILED_CLOSED : FAILED_OPEN;
    }

    /** Returns a held lease ({@link Lease#release()}, once): one fewer in flight. */
    void returned(String caller, String id) {
        announcer.lease(false);
        release(caller, id);
    }

    /** Returns a lease, waiting at most the timeout; a failure is logged, and the lease then expires on its own. */
    void release(String caller, String id) {
        try {
            store.releaseLease(caller, limit, id).toCompletableFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
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

    /** The store the leases are held in. */
    public RateLimitStore store() {
        return store;
    }

    /** What taking a lease does when the store fails or is late. */
    public FailureMode failureMode() {
        return failureMode;
    }

    /** The longest taking (or returning) a lease waits on the store. */
    public Duration timeout() {
        return timeout;
    }

    /** How many leases were decided without the store (errors, timeouts, an open circuit). */
    public long storeFailures() {
        return failures.sum();
    }

    @Override
    public String toString() {
        return "ConcurrencyLimiter[" + limit + "] failure-mode " + failureMode.configName() + " timeout "
                + Durations.formatDuration(timeout) + (announcer.shadow() ? " shadow" : "");
    }

    /** Collects the limit and settings of a {@link ConcurrencyLimiter}; validates in {@link #build()}. */
    public static final class Builder {
        private Limit limit;
        private RateLimitStore store;
        private FailureMode failureMode = FailureMode.OPEN;
        private Duration timeout = Durations.DEFAULT_TIMEOUT;
        private boolean shadow;
        private DecisionListener listener;

        private Builder() {
        }

        /** The cap, an {@link Algorithm#CONCURRENCY} limit such as {@link Limit#concurrency}; required. */
        public Builder limit(Limit limit) {
            this.limit = Objects.requireNonNull(limit, "limit");
            return this;
        }

        /** The store; default a new {@link dev.sluice.memory.MemoryStore}. */
        public Builder store(RateLimitStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /** What taking a lease does when the store fails or is late; default {@link FailureMode#OPEN}. */
        public Builder failureMode(FailureMode failureMode) {
            this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
            return this;
        }

        /** The longest taking a lease may wait on the store, from 1 ms to 1 minute; default 100 ms. */
        public Builder timeout(Duration timeout) {
            this.timeout = Durations.checkTimeout(timeout);
            return this;
        }

        /** Shadow mode: refuse nothing; a refusal becomes {@link Decision.Outcome#SHADOW_REJECTED}, holding no lease. */
        public Builder shadowMode(boolean shadow) {
            this.shadow = shadow;
            return this;
        }

        /** Hears every decision, e.g. {@link dev.sluice.metrics.MicrometerMetrics}; default none. */
        public Builder listener(DecisionListener listener) {
            this.listener = listener;
            return this;
        }

        /**
         * Builds the limiter.
         *
         * @throws IllegalArgumentException if the limit is missing or not a concurrency limit
         */
        public ConcurrencyLimiter build() {
            if (limit == null || limit.algorithm().isRate()) {
                throw new IllegalArgumentException("a concurrency limiter needs a 'limit' of algorithm concurrency, got '"
                        + limit + "'");
            }
            return new ConcurrencyLimiter(this);
        }
    }
}
