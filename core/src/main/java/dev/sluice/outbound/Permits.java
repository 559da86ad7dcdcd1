package dev.sluice.outbound;

import dev.sluice.Decision;
import dev.sluice.RateLimiter;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
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
    private final Duration longestPause;

    private Permits(RateLimiter limiter, Duration maxWait) {
        this(limiter, maxWait, DEFAULT_LONGEST_PAUSE);
    }

    private Permits(RateLimiter limiter, Duration maxWait, Duration longestPause) {
        this.limiter = Objects.requireNonNull(limiter, "limiter");
        this.maxWait = Objects.requireNonNull(maxWait, "maxWait");
        this.longestPause = Objects.requireNonNull(longestPause, "longestPause");
        limiter.checkCanWait(maxWait);
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
        return new Permits(limiter, maxWait, longest);
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
        return "Permits[" + limiter.name() + " waiting at most " + maxWait.toMillis() + " ms, pausing at most "
                + longestPause.toSeconds() + " s]";
    }
}
