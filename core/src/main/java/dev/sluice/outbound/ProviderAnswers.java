package dev.sluice.outbound;

import dev.sluice.RateLimiter;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * What a policy learns from its provider's answers: the pause one asks for ({@link ProviderPause}),
 * cut to the longest pause, and the warnings about answers that ask too much. Logs neither key nor
 * header values beyond the first bad one: a key may name an account.
 */
final class ProviderAnswers {

    private static final Logger LOG = LoggerFactory.getLogger(Permits.class);

    private final RateLimiter limiter;
    private final Duration longestPause;
    /** When a capped pause was last logged: at most one line every ten seconds per policy. */
    private final AtomicLong cappedLogged = new AtomicLong(System.nanoTime() - TimeUnit.SECONDS.toNanos(10));
    /** Whether a pause that cannot be meant was logged: once, since a provider's bug repeats with every answer. */
    private final AtomicBoolean unmeantLogged = new AtomicBoolean();
    /** Logs the first answer asking for a pause that cannot be meant; made once, not per answer. */
    private final Consumer<String> unmeant = this::unmeant;

    /**
     * @throws IllegalArgumentException unless {@code longestPause} is from 1 second to 1 hour
     */
    ProviderAnswers(RateLimiter limiter, Duration longestPause) {
        Objects.requireNonNull(longestPause, "longest");
        if (longestPause.compareTo(Duration.ofSeconds(1)) < 0 || longestPause.compareTo(RateLimiter.LONGEST_WAIT) > 0) {
            throw new IllegalArgumentException("'longest-pause' must be from 1s to 1h, got '" + longestPause + "'");
        }
        this.limiter = limiter;
        this.longestPause = longestPause;
    }

    Duration longestPause() {
        return longestPause;
    }

    /** The pause an answer to a call of {@code key} asks for, at most {@link #longestPause()}; zero if none. */
    Duration requested(String key, int status, Function<String, String> header) {
        Objects.requireNonNull(key, "key");
        Duration pause = ProviderPause.requested(status, header, System.currentTimeMillis(), unmeant);
        if (pause.compareTo(longestPause) > 0) {
            long now = System.nanoTime();
            long last = cappedLogged.get();
            if (now - last >= TimeUnit.SECONDS.toNanos(10) && cappedLogged.compareAndSet(last, now)) {
                LOG.warn("A provider asked policy {} to pause for {} s; pausing for {} s, the longest pause "
                        + "(Permits.withLongestPause)", limiter.name(), pause.toSeconds(), longestPause.toSeconds());
            }
            return longestPause;
        }
        return pause.compareTo(Duration.ofMillis(1)) < 0 ? Duration.ZERO : pause;
    }

    private void unmeant(String header) {
        if (unmeantLogged.compareAndSet(false, true)) {
            LOG.warn("A provider's answer to policy {} asks for a pause that cannot be meant, more than {} days ({}); "
                    + "ignored as bad input, no pause recorded (logged once)", limiter.name(),
                    ProviderPause.LONGEST_MEANT.toDays(), header);
        }
    }
}
