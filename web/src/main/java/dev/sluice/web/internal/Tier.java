package dev.sluice.web.internal;

import dev.sluice.Limit;
import dev.sluice.internal.Durations;
import dev.sluice.internal.PolicyChars;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One named tier of a route, one item of {@code tier-limits}: its own limit under its own policy
 * name {@code <policy>/<tier>} (so its own stored state: a caller that changes tiers meets the new
 * tier's budget at its next request), or unlimited. A configured policy cannot hold {@code /}, so
 * no route's policy names a tier's state (as {@code api.premium} could, were the separator a dot).
 *
 * @param name  the tier's name: a role, or the value of the tier attribute or header
 * @param limit the tier's limit; {@code null}: unlimited (the store is never asked)
 */
public record Tier(String name, Limit limit) {

    /** The longest tier name: a one-character policy, the separator and it fill a policy's length. */
    private static final int MAX_NAME = PolicyChars.MAX_LENGTH - 1;
    /** Between a route's policy and a tier's name; outside the characters of a configured policy. */
    static final char SEPARATOR = PolicyChars.TIER_SEPARATOR;

    /** Validates the name. */
    public Tier {
        Objects.requireNonNull(name, "name");
    }

    /** Whether the tier is {@code unlimited}. */
    public boolean unlimited() {
        return limit == null;
    }

    /**
     * Parses a {@code tier-limits} value, comma-separated {@code name:<count>/<period>} or
     * {@code name:unlimited}, such as {@code premium:1000/1h,internal:unlimited}. Each tier's limit
     * is {@code base} (the route's {@code limit}: algorithm and cost) at the tier's rate, with a
     * burst of its count, under the policy {@code <base policy>/<name>}.
     *
     * @throws IllegalArgumentException naming {@code 'tier-limits'} and the value
     */
    public static List<Tier> parseList(String value, Limit base) {
        List<Tier> tiers = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (String item : value.split(",", -1)) {
            int colon = item.indexOf(':');
            String name = colon < 0 ? "" : item.substring(0, colon).trim();
            String rate = colon < 0 ? "" : item.substring(colon + 1).trim();
            if (!PolicyChars.isName(name, MAX_NAME) || rate.isEmpty()) {
                throw new IllegalArgumentException(
                        "'tier-limits' must be a comma-separated list of name:<count>/<period> "
                        + "or name:unlimited, names of " + PolicyChars.DESCRIPTION
                        + " (e.g. premium:1000/1h,internal:unlimited), "
                        + "got '" + value + "'");
            }
            if (!names.add(name)) {
                throw new IllegalArgumentException("'tier-limits' names the tier '" + name + "' twice, got '" + value
                        + "'");
            }
            tiers.add(new Tier(name, rate.equals("unlimited") ? null : limit(name, rate, base, value)));
        }
        return List.copyOf(tiers);
    }

    private static Limit limit(String name, String rate, Limit base, String value) {
        try {
            Durations.Rate parsed = Durations.parseRate(rate);
            return new Limit(base.policy() + SEPARATOR + name, base.algorithm(), parsed.count(), parsed.period(),
                    parsed.count(),
                    base.cost());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'tier-limits' tier '" + name + "': " + e.getMessage() + " (in '" + value
                    + "')", e);
        }
    }

    /** As {@code tier-limits} writes it: {@code premium:1000/1h} or {@code internal:unlimited}. */
    @Override
    public String toString() {
        return name + ":"
                + (limit == null ? "unlimited" : limit.count() + "/" + Durations.formatDuration(limit.period()));
    }
}
