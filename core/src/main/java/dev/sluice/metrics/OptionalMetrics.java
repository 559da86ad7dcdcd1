package dev.sluice.metrics;

import dev.sluice.DecisionListener;
import dev.sluice.internal.Classes;

/**
 * Metrics for the adapters' {@code metrics=true}: Micrometer's global registry when Micrometer is
 * on the class path, nothing otherwise. The reference to {@link MicrometerMetrics} sits in a
 * holder class that is only loaded when Micrometer is present, so this class is safe to use
 * from code that must run without Micrometer.
 */
public final class OptionalMetrics {

    private static final boolean MICROMETER = Classes.present("io.micrometer.core.instrument.MeterRegistry",
            OptionalMetrics.class.getClassLoader());

    private OptionalMetrics() {
    }

    /** Whether Micrometer is on the class path. */
    public static boolean available() {
        return MICROMETER;
    }

    /** A listener publishing to Micrometer's global registry, or {@code null} if disabled or absent. */
    public static DecisionListener listener(boolean enabled, String policy) {
        return enabled && MICROMETER ? Holder.global(policy) : null;
    }

    private static final class Holder {
        static DecisionListener global(String policy) {
            return MicrometerMetrics.global(policy);
        }
    }
}
