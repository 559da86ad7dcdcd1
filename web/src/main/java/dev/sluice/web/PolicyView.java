package dev.sluice.web;

import dev.sluice.FailureMode;
import dev.sluice.Limit;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One policy of a {@link PolicyRegistry} as it is now.
 *
 * @param name        the policy name (a tier's is {@code <policy>/<tier>})
 * @param routes      the routes deciding it, such as {@code filter 'search'}
 * @param configured  the limit as configured
 * @param effective   the limit deciding now: the override's, or the configured one
 * @param override    the override in the store, or {@code null}; in force unless {@link Override#applied()} is false
 * @param store       the store, a password in it shown as {@code ***}
 * @param failureMode what decisions do while the store fails
 * @param circuitOpen whether decisions have stopped waiting on the failing store
 * @param key         the key sources, as the {@code key} parameter writes them
 * @param counts      decisions since start by outcome ({@code allowed}, {@code rejected}, ...)
 * @param allowedPerSecond allowed decisions of each of the last seconds, oldest first
 * @param refusedPerSecond refused decisions of each of the last seconds, oldest first
 * @param topRefused  the callers refused most often lately, most first
 */
public record PolicyView(String name, List<String> routes, Limit configured, Limit effective, Override override,
                         String store, FailureMode failureMode, boolean circuitOpen, String key,
                         Map<String, Long> counts, List<Long> allowedPerSecond, List<Long> refusedPerSecond,
                         List<Refused> topRefused) {

    /** Copies the lists and maps. */
    public PolicyView {
        routes = List.copyOf(routes);
        counts = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(counts)); // outcomes in order
        allowedPerSecond = List.copyOf(allowedPerSecond);
        refusedPerSecond = List.copyOf(refusedPerSecond);
        topRefused = List.copyOf(topRefused);
    }

    /**
     * An operator's override of a policy's limit, as the store holds it.
     *
     * @param limit             the {@code limit} value, such as {@code 200/1m}
     * @param burst             the {@code burst} value, or {@code null}
     * @param by                who set it
     * @param at                when, or {@code null} if the store does not say
     * @param configuredWhenSet the limit configured where and when it was set, or {@code null} if
     *                          the store does not say (one set by an older version)
     * @param configuredChanged whether the limit configured here differs from {@code configuredWhenSet}:
     *                          the override was set against another configuration
     * @param notApplied        why this application cannot apply it (its configured limit decides),
     *                          or {@code null}: it decides
     */
    public record Override(String limit, String burst, String by, Instant at, ConfiguredLimit configuredWhenSet,
                           boolean configuredChanged, String notApplied) {

        /** An override in force, without the configuration it was set against. */
        public Override(String limit, String burst, String by, Instant at) {
            this(limit, burst, by, at, null, false, null);
        }

        /** Whether the override decides: the application could apply it. */
        public boolean applied() {
            return notApplied == null;
        }
    }

    /**
     * A configured limit as an override recorded it.
     *
     * @param limit {@code <count>/<period>}, such as {@code 5/1h}
     * @param burst the bucket's capacity (the count when the algorithm has no burst)
     */
    public record ConfiguredLimit(String limit, long burst) {
    }

    /**
     * A caller refused often lately: by its partition key (a keyed hash, safe to show), its
     * identity (shown only when asked) and about how many refusals.
     */
    public record Refused(String partition, String identity, long count) {
    }
}
