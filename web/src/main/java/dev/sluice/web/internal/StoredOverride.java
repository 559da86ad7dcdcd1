package dev.sluice.web.internal;

import dev.sluice.Limit;
import dev.sluice.internal.Durations;

import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * An operator's override of a policy's limit as the store keeps it:
 * {@code <limit>|<burst>|<instant>|configured=<limit>,<burst>|<principal>}, the configured limit
 * being the one of the instance that set it; older versions wrote
 * {@code <limit>|<burst>|<instant>|<principal>}, which is read too. Its fields are never checked
 * here: what decides is {@link #apply}d against each configured limit.
 *
 * @param configured the {@link #signature} of the limit configured where it was set, or {@code null}
 * @param at         when it was set, or {@code null} if written by hand
 */
record StoredOverride(String limit, String burst, Instant at, String configured, String by) {

    private static final String CONFIGURED = "configured=";

    static StoredOverride parse(String raw) {
        String[] fields = raw.split("\\|", 4);
        Instant at = null;
        try {
            at = fields.length > 2 && !fields[2].isEmpty() ? Instant.parse(fields[2]) : null;
        } catch (RuntimeException e) {
            // written by hand: shown without a time
        }
        String rest = fields.length > 3 ? fields[3] : null;
        String configured = null;
        if (rest != null && rest.startsWith(CONFIGURED) && rest.indexOf('|') > 0) {
            configured = rest.substring(CONFIGURED.length(), rest.indexOf('|'));
            rest = rest.substring(rest.indexOf('|') + 1);
        }
        return new StoredOverride(fields[0], fields.length > 1 && !fields[1].isEmpty() ? fields[1] : null, at,
                configured, rest);
    }

    String raw() {
        return limit + "|" + (burst == null ? "" : burst) + "|" + (at == null ? "" : at) + "|" + CONFIGURED
                + configured + "|" + by;
    }

    /** {@code configured} with this override's limit and burst; see {@link #apply(Limit, String, String)}. */
    Limit applyTo(Limit configuredLimit) {
        return apply(configuredLimit, limit, burst);
    }

    /** Whether the limit configured here differs from the one this was set against, when it says. */
    boolean changed(Limit configuredLimit) {
        return configured != null && !configured.equals(signature(configuredLimit));
    }

    /** What an override replaces of a limit, as stored: {@code <count>/<period>,<burst>}. */
    static String signature(Limit limit) {
        return limit.count() + "/" + Durations.formatDuration(limit.period()) + "," + limit.burst();
    }

    /** A {@link #signature} as {@link #describe(Limit)} writes a limit. */
    static String describe(String signature) {
        int comma = signature.lastIndexOf(',');
        return comma < 0 ? signature : signature.substring(0, comma) + " burst " + signature.substring(comma + 1);
    }

    static String describe(Limit limit) {
        if (!limit.algorithm().isRate()) {
            return limit.count() + " in flight"; // a cap's period is no rate's
        }
        return limit.count() + "/" + Durations.formatDuration(limit.period())
                + (limit.algorithm().hasBurst() ? " burst " + limit.burst() : "");
    }

    /**
     * {@code configured} with another {@code limit} and {@code burst}, parsed by the code that
     * parses the parameters, with its messages.
     */
    static Limit apply(Limit configured, String limit, String burst) {
        if (!configured.algorithm().isRate()) {
            throw new IllegalArgumentException("policy '" + configured.policy() + "' caps requests in flight; "
                    + "overrides apply to rate limits");
        }
        String policy = configured.policy();
        int tier = policy.indexOf(Tier.SEPARATOR);
        String own = tier < 0 ? policy : policy.substring(0, tier);
        Map<String, String> values = new HashMap<>();
        values.put(Parameter.POLICY.configName(), own);
        values.put(Parameter.ALGORITHM.configName(), configured.algorithm().configName());
        values.put(Parameter.LIMIT.configName(), limit);
        values.put(Parameter.BURST.configName(), burst);
        values.put(Parameter.COST.configName(), Long.toString(configured.cost()));
        return RouteSpec.parse(values::get, own).limit().withPolicy(policy);
    }
}
