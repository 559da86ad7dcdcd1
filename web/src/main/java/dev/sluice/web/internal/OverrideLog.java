package dev.sluice.web.internal;

import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Logs what changed in the overrides one instance applies, once per override and configured
 * limit: at WARN an override that decides instead of the configured limit, or that cannot be
 * applied; at INFO the configured limit deciding again. On every instance, not only the one that
 * set it: a forgotten override beats a new deployment's configuration silently otherwise. Names
 * no store: its address may carry a password. Not thread-safe: {@link ApplicationPolicies}
 * serialises its calls.
 */
final class OverrideLog {

    private static final Logger LOG = LoggerFactory.getLogger(ApplicationPolicies.class);

    /** Per policy, the override and configured limit last logged, so that each is logged once. */
    private final Map<String, String> announced = new HashMap<>();
    /** The policies whose override was last logged as deciding instead of the configured limit. */
    private final Set<String> overridden = new HashSet<>();

    /**
     * Logs the changes since the last call.
     *
     * @param byPolicy the routes of each policy
     * @param applied  the overrides applied from a store, raw
     */
    void announce(Map<String, List<PolicyRoute>> byPolicy, Function<RateLimitStore, Map<String, String>> applied) {
        announced.keySet().retainAll(byPolicy.keySet());
        overridden.retainAll(byPolicy.keySet());
        byPolicy.forEach((name, of) -> {
            String raw = applied.apply(of.get(0).store()).get(name);
            Limit configured = PolicyRoute.configured(of, name);
            String key = raw + "\n" + StoredOverride.signature(configured);
            if (key.equals(announced.put(name, key))) {
                return;
            }
            StoredOverride stored = raw == null ? null : StoredOverride.parse(raw);
            String problem = stored == null ? null : PolicyRoute.notApplied(of, name, stored);
            Limit now = stored == null || problem != null ? configured : stored.applyTo(configured);
            if (problem != null) {
                LOG.warn("Sluice policy '{}': the override in the store is not applied: {}; the configured limit {} "
                        + "decides", name, problem, StoredOverride.describe(configured));
            } else if (!StoredOverride.signature(now).equals(StoredOverride.signature(configured))) {
                LOG.warn("Sluice policy '{}': the override {} decides instead of the configured limit {} (set by {} at "
                        + "{}{})", name, StoredOverride.describe(now), StoredOverride.describe(configured), stored.by(),
                        stored.at() == null ? "an unknown time" : stored.at(), stored.changed(configured)
                                ? ", when " + StoredOverride.describe(stored.configured()) + " was configured" : "");
                overridden.add(name);
                return;
            }
            if (overridden.remove(name) && problem == null) {
                LOG.info("Sluice policy '{}': the configured limit {} decides again", name,
                        StoredOverride.describe(configured));
            }
        });
    }
}
