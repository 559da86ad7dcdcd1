package dev.sluice.web.internal;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.spi.RateLimitStore;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A route registered in {@link ApplicationPolicies}: its guard and the store it decides on.
 *
 * @param storeValue the {@code store} value, shown redacted; {@code null} for a store given in Java
 */
record PolicyRoute(Guard guard, RateLimitStore store, String storeValue) {

    /** The routes of each policy name, in the order the routes and their limits came. */
    static Map<String, List<PolicyRoute>> byPolicy(List<PolicyRoute> routes) {
        Map<String, List<PolicyRoute>> out = new LinkedHashMap<>();
        for (PolicyRoute route : routes) {
            Set<String> names = new LinkedHashSet<>();
            LimitChoice choice = route.guard.configuredChoice();
            if (choice != null) {
                choice.limiters().forEach(limiter -> limiter.limits().forEach(limit -> names.add(limit.policy())));
            }
            if (route.guard.concurrencyLimiter() != null) {
                names.add(route.guard.concurrencyLimiter().limit().policy());
            }
            names.forEach(name -> out.computeIfAbsent(name, n -> new ArrayList<>()).add(route));
        }
        return out;
    }

    /** The configured limit of {@code policy} on the first of {@code of}. */
    static Limit configured(List<PolicyRoute> of, String policy) {
        for (PolicyRoute route : of) {
            LimitChoice choice = route.guard.configuredChoice();
            if (choice != null) {
                for (RateLimiter limiter : choice.limiters()) {
                    for (Limit limit : limiter.limits()) {
                        if (limit.policy().equals(policy)) {
                            return limit;
                        }
                    }
                }
            }
            if (route.guard.concurrencyLimiter() != null
                    && route.guard.concurrencyLimiter().limit().policy().equals(policy)) {
                return route.guard.concurrencyLimiter().limit();
            }
        }
        throw new IllegalArgumentException("no policy '" + policy + "' in this application");
    }

    /** Why one of {@code of} cannot apply {@code stored}, or {@code null}: all can. */
    static String notApplied(List<PolicyRoute> of, String policy, StoredOverride stored) {
        for (PolicyRoute route : of) {
            try {
                stored.applyTo(configured(List.of(route), policy));
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        }
        return null;
    }
}
