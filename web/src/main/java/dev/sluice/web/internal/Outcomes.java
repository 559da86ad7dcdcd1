package dev.sluice.web.internal;

import dev.sluice.ConcurrencyLimiter;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.web.RequestAttributes;
import dev.sluice.web.RequestView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one route's decisions leave behind: the request attributes of {@link RequestAttributes},
 * the console's {@link Traffic}, and a log line, at most every ten seconds, of the requests shadow
 * mode let through. Thread-safe.
 */
final class Outcomes {

    /** The outcomes as {@link RequestAttributes#OUTCOME} (and the metrics) name them. */
    private static final String[] OUTCOMES = Arrays.stream(Decision.Outcome.values())
            .map(o -> o.name().toLowerCase(Locale.ROOT)).toArray(String[]::new);
    /** Shadow mode logs a would-be rejection at most this often per route. */
    private static final long SHADOW_LOG_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final Logger LOG = LoggerFactory.getLogger(Guard.class);

    private final Traffic traffic = new Traffic();
    /** The route, for log lines, such as {@code filter 'search'}. */
    private final String where;
    private final LongAdder shadowRejections = new LongAdder();
    private final AtomicLong shadowLogged = new AtomicLong(System.nanoTime() - SHADOW_LOG_NANOS);

    Outcomes(String where) {
        this.where = where;
    }

    /**
     * Puts what was decided on the request and logs a rejection shadow mode let through, naming
     * the route, the policy and the caller by its partition key.
     *
     * @param limiter     the rate limiter that decided; {@code null}: the concurrency limiter
     * @param concurrency the route's concurrency limiter, or {@code null}
     */
    void note(RequestView request, Decision decision, RateLimiter limiter, ConcurrencyLimiter concurrency,
              String caller, String partition) {
        traffic.record(decision.outcome(), caller, partition);
        Decision.Quota binding = decision.binding();
        // Named (and joined) only when the store could not decide: no string built per request.
        String policy = binding != null ? binding.limit().policy()
                : limiter != null ? limiter.name() : concurrency.limit().policy();
        request.setAttribute(RequestAttributes.OUTCOME, OUTCOMES[decision.outcome().ordinal()]);
        request.setAttribute(RequestAttributes.POLICY, policy);
        request.setAttribute(RequestAttributes.REMAINING, binding == null ? null : binding.remaining());
        request.setAttribute(RequestAttributes.PARTITION, partition);
        if (decision.outcome() == Decision.Outcome.SHADOW_REJECTED) {
            shadowRejections.increment();
            long now = System.nanoTime();
            long last = shadowLogged.get();
            if (now - last >= SHADOW_LOG_NANOS && shadowLogged.compareAndSet(last, now)) {
                LOG.info("{}: shadow mode let through a request policy '{}' would have rejected, of caller {} ({} "
                        + "so far on this route)", where, policy, partition, shadowRejections.sum());
            }
        }
    }

    /** What the route decided, for the console. */
    Traffic traffic() {
        return traffic;
    }
}
