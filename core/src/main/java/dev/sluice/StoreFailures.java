package dev.sluice;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a request the store did not answer becomes: counted, told to the limiter's listener,
 * logged at most every ten seconds, and answered by the failure mode's
 * {@link StoreResilience.Fallback}, once per request. Thread-safe.
 *
 * @param <A> what a request asks about besides the caller
 * @param <T> what the store would have answered
 */
final class StoreFailures<A, T> {

    /** The limiter's name, the one users configure. */
    private static final Logger LOG = LoggerFactory.getLogger(RateLimiter.class);

    private final StoreResilience.Fallback<A, T> fallback;
    private final FailureMode failureMode;
    private final Duration timeout;
    /** The limiter, as logs name it: {@code policies [a, b]}, {@code concurrency policy c}. */
    private final String name;
    private final ShadowAndListener shadowAndListener;
    private final LongAdder count = new LongAdder();
    private final QuietLog log = new QuietLog();

    StoreFailures(StoreResilience.Fallback<A, T> fallback, LimiterSettings settings, String name,
                  ShadowAndListener shadowAndListener) {
        this.fallback = fallback;
        this.failureMode = settings.failureMode();
        this.timeout = settings.timeout();
        this.name = name;
        this.shadowAndListener = shadowAndListener;
    }

    /** The store answered: a fallback holding state of its own may drop it. */
    void storeAnswered() {
        fallback.storeAnswered();
    }

    /** The store failed or was late with {@code cause}: logged, at most every ten seconds. */
    T failed(String caller, A request, Throwable cause) {
        count.increment();
        shadowAndListener.storeError(StoreError.of(cause));
        if (log.due()) {
            LOG.warn("Rate-limit store failed or exceeded {} ms; failing {} for {} ({} failures so far): {}",
                    timeout.toMillis(), failureMode.configName(), name, count.sum(), cause.toString());
        }
        return fallback.decide(caller, request);
    }

    /**
     * The caller was interrupted while it waited: the failure mode's answer, which a caller that
     * can throw the interrupt ({@code acquire}) never hands out; not the store's failure.
     */
    T interrupted(String caller, A request) {
        return fallback.decide(caller, request);
    }

    /** The circuit is open: no wait, no log (the breaker logged the opening); still a failure. */
    T circuitOpen(String caller, A request) {
        count.increment();
        shadowAndListener.storeError(StoreError.CIRCUIT_OPEN);
        return fallback.decide(caller, request);
    }

    /** How many results were made without the store (errors, timeouts, an open circuit). */
    long count() {
        return count.sum();
    }
}
