package dev.sluice.web.internal;

import dev.sluice.CircuitState;
import dev.sluice.DecisionListener;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.metrics.OptionalMetrics;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The metrics listeners of one route's limiters ({@code metrics=true}), one per {@code policy} tag:
 * a limiter built again for the same policies (an operator's override) publishes to the meters
 * its predecessor registered. Micrometer keeps the first gauge of a name and tags and ignores (with
 * a warning) any later one, whose gauge would read a limiter no longer deciding. Thread-safe.
 */
final class Meters {

    /** No metrics. */
    static final Meters NONE = new Meters(false, null);

    private final boolean enabled;
    private final Object registry;
    private final Map<String, DecisionListener> byTag = new ConcurrentHashMap<>();

    /**
     * @param enabled  {@code metrics}
     * @param registry the application's {@code MeterRegistry}, or {@code null}: Micrometer's global one
     */
    Meters(boolean enabled, Object registry) {
        this.enabled = enabled;
        this.registry = registry;
    }

    /** The listener of a limiter of {@code limits}, the same for the same policies; {@code null}: no metrics. */
    DecisionListener of(List<Limit> limits) {
        if (!enabled || !OptionalMetrics.available()) {
            return null;
        }
        String tag = tag(limits);
        return byTag.computeIfAbsent(tag, t -> OptionalMetrics.listener(true, registry, t));
    }

    /**
     * Tells the meters of {@code limiter}, which now decides in another's place, the state of its
     * circuit: the gauge holds the state last told, and the limiter replaced tells no more.
     */
    void deciding(RateLimiter limiter) {
        DecisionListener listener = byTag.get(tag(limiter.limits()));
        if (listener != null) {
            listener.onCircuit(limiter.storeCircuitOpen() ? CircuitState.OPEN : CircuitState.CLOSED);
        }
    }

    private static String tag(List<Limit> limits) {
        return limits.stream().map(Limit::policy).collect(Collectors.joining("+"));
    }
}
