package dev.sluice.metrics;

import dev.sluice.DecisionListener;
import dev.sluice.internal.Classes;

/**
 * Metrics for the adapters' {@code metrics=true}: the application's own Micrometer registry when it
 * gives one ({@link #REGISTRY}), else Micrometer's global registry, when Micrometer is on the class
 * path; nothing otherwise. The reference to {@link MicrometerMetrics} sits in a
 * holder class that is only loaded when Micrometer is present, so this class is safe to use
 * from code that must run without Micrometer.
 */
public final class OptionalMetrics {

    private static final boolean MICROMETER = Classes.present("io.micrometer.core.instrument.MeterRegistry",
            OptionalMetrics.class.getClassLoader());

    /**
     * Where an application gives the adapters its {@code io.micrometer.core.instrument.MeterRegistry}:
     * the {@code ServletContext} attribute of this name for the servlet filters (set by a
     * {@code ServletContextListener} or a {@code ServletContainerInitializer}, before the filters
     * start), and the JAX-RS application property of this name for the feature.
     */
    public static final String REGISTRY = "dev.sluice.metrics.registry";

    private OptionalMetrics() {
    }

    /** Whether Micrometer is on the class path. */
    public static boolean available() {
        return MICROMETER;
    }

    /** A listener publishing to Micrometer's global registry, or {@code null} if disabled or absent. */
    public static DecisionListener listener(boolean enabled, String policy) {
        return listener(enabled, null, policy);
    }

    /**
     * A listener publishing to {@code registry}, or to Micrometer's global registry when it is
     * {@code null}; {@code null} if disabled or Micrometer is absent.
     *
     * @param registry a {@code MeterRegistry}, typed {@code Object} so that callers need no Micrometer
     * @throws IllegalArgumentException if {@code registry} is not a {@code MeterRegistry}
     */
    public static DecisionListener listener(boolean enabled, Object registry, String policy) {
        if (!enabled || !MICROMETER) {
            return null;
        }
        return registry == null ? Holder.global(policy) : Holder.of(registry, policy);
    }

    private static final class Holder {
        static DecisionListener global(String policy) {
            return MicrometerMetrics.global(policy);
        }

        static DecisionListener of(Object registry, String policy) {
            if (!(registry instanceof io.micrometer.core.instrument.MeterRegistry meters)) {
                throw new IllegalArgumentException("'" + REGISTRY
                        + "' must be an io.micrometer.core.instrument.MeterRegistry, "
                        + "got a " + registry.getClass().getName());
            }
            return MicrometerMetrics.of(meters, policy);
        }
    }
}
