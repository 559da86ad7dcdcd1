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
 * @param override    the override, or {@code null}
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
     * An operator's override of a policy's limit.
     *
     * @param limit the {@code limit} value, such as {@code 200/1m}
     * @param burst the {@code burst} value, or {@code null}
     * @param by    who set it
     * @param at    when
     */
    public record Override(String limit, String burst, String by, Instant at) {
    }

    /**
     * A caller refused often lately: by its partition key (a keyed hash, safe to show), its
     * identity (shown only when asked) and about how many refusals.
     */
    public record Refused(String partition, String identity, long count) {
    }
}
