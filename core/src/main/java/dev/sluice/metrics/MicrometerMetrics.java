package dev.sluice.metrics;

import dev.sluice.Decision;
import dev.sluice.CircuitState;
import dev.sluice.DecisionListener;
import dev.sluice.StoreError;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes a limiter's decisions to Micrometer, per policy:
 *
 * <ul>
 *   <li>{@code sluice.decisions} (counter), tagged {@code policy} and {@code outcome}:
 *       {@code allowed}, {@code rejected}, {@code shadow_rejected}, {@code unsatisfiable},
 *       {@code failed_open} (allowed without the store), {@code failed_closed}, and the decisions of
 *       {@code failure-mode=local}'s limiter in this JVM, counted apart from the store's:
 *       {@code local_allowed} and {@code local_rejected};
 *   <li>{@code sluice.store.errors} (counter), tagged {@code policy} and {@code error.type}
 *       ({@link StoreError#tag()}: {@code timeout}, {@code circuit_open}, {@code connection},
 *       {@code script}, {@code unreadable_state}, {@code other}): decisions the store could not
 *       make, whatever the failure mode (local decisions included), by why;
 *   <li>{@code sluice.decision.latency} (timer), tagged {@code policy};
 *   <li>{@code sluice.refunds} (counter), tagged {@code policy} and {@code outcome}: {@code refunded}
 *       when the store confirmed a refund ({@code charge=after}), {@code failed} when it did not
 *       in time (the request stays charged);
 *   <li>{@code sluice.store.circuit} (gauge), tagged {@code policy}: the circuit breaker on the
 *       store, {@code 0} closed, {@code 1} open, {@code 0.5} half-open (a probe out);
 *   <li>{@code sluice.leases.active} (gauge), tagged {@code policy}: the leases of a concurrency
 *       policy this instance holds now (taken and not yet returned); {@code 0} for a rate policy;
 *   <li>{@code sluice.rejection.cache.hits} (counter), tagged {@code policy}: rejections the Redis
 *       store repeated from this JVM's copy of recent rejections, without a round trip (counted
 *       in {@code sluice.decisions{outcome=rejected}} too).
 * </ul>
 *
 * <p>Micrometer is an optional dependency of Sluice: this class is only loaded when the
 * application has {@code micrometer-core} on its class path. The meters are created once, so a
 * decision costs a few atomic increments. Thread-safe.
 */
public final class MicrometerMetrics implements DecisionListener {

    private final Counter[] decisions = new Counter[Decision.Outcome.values().length];
    private final Counter[] storeErrors = new Counter[StoreError.values().length];
    private final Timer latency;
    private final Counter refunded;
    private final Counter refundFailed;
    /** The circuit's state as the gauge reads it; written on each change only. */
    private volatile double circuit;
    private final AtomicLong leases = new AtomicLong();
    private final Counter cacheHits;

    private MicrometerMetrics(MeterRegistry registry, String policy) {
        for (Decision.Outcome outcome : Decision.Outcome.values()) {
            decisions[outcome.ordinal()] = Counter.builder("sluice.decisions")
                    .description("Rate-limit decisions")
                    .tag("policy", policy)
                    .tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
                    .register(registry);
        }
        for (StoreError error : StoreError.values()) {
            storeErrors[error.ordinal()] = Counter.builder("sluice.store.errors")
                    .description("Decisions the store failed to make, by why")
                    .tag("policy", policy).tag("error.type", error.tag()).register(registry);
        }
        latency = Timer.builder("sluice.decision.latency").description("Time to decide, including the store")
                .tag("policy", policy).register(registry);
        refunded = refunds(registry, policy, "refunded");
        refundFailed = refunds(registry, policy, "failed");
        cacheHits = Counter.builder("sluice.rejection.cache.hits")
                .description("Rejections repeated from this JVM's copy, without asking the store")
                .tag("policy", policy).register(registry);
        // Gauges hold this listener weakly (Micrometer's default): a limiter dropped is not kept
        // alive by the registry; its gauge then reads NaN.
        Gauge.builder("sluice.store.circuit", this, m -> m.circuit)
                .description("The circuit breaker on the store: 0 closed, 1 open, 0.5 half-open")
                .tag("policy", policy).register(registry);
        Gauge.builder("sluice.leases.active", this, m -> m.leases.get())
                .description("Leases of a concurrency policy this instance holds now")
                .tag("policy", policy).register(registry);
    }

    private static Counter refunds(MeterRegistry registry, String policy, String outcome) {
        return Counter.builder("sluice.refunds").description("Refunds of requests that turned out not to count")
                .tag("policy", policy).tag("outcome", outcome).register(registry);
    }

    /**
     * Metrics of one limiter in {@code registry}.
     *
     * @param policy the {@code policy} tag: the limiter's policy names, joined with {@code +}
     */
    public static MicrometerMetrics of(MeterRegistry registry, String policy) {
        return new MicrometerMetrics(registry, policy);
    }

    /** Metrics of one limiter in Micrometer's global registry ({@link Metrics#globalRegistry}). */
    public static MicrometerMetrics global(String policy) {
        return of(Metrics.globalRegistry, policy);
    }

    @Override
    public void onDecision(Decision decision, long elapsedNanos) {
        decisions[decision.outcome().ordinal()].increment();
        latency.record(elapsedNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void onStoreError(StoreError error) {
        storeErrors[error.ordinal()].increment();
    }

    @Override
    public void onRefund(boolean confirmed) {
        (confirmed ? refunded : refundFailed).increment();
    }

    @Override
    public void onCircuit(CircuitState state) {
        circuit = switch (state) {
            case CLOSED -> 0;
            case OPEN -> 1;
            case HALF_OPEN -> 0.5;
        };
    }

    @Override
    public void onLocalRejection() {
        cacheHits.increment();
    }

    @Override
    public void onLease(boolean taken) {
        if (taken) {
            leases.incrementAndGet();
        } else {
            leases.decrementAndGet();
        }
    }
}
