package dev.sluice.web.internal;

import dev.sluice.web.HeaderStyle;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.RequestView;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Which limits decide a request of one route: the route's own, its tier's ({@code tier} and
 * {@code tier-limits}), or those a {@link LimitResolver} returns. Every limiter of the tiers is
 * built at start-up, so a request only picks one; a resolver's are built on first use of each
 * distinct list and kept. Immutable but for that cache, and thread-safe.
 */
final class LimitChoice {

    /** The most limiters a {@link LimitResolver}'s distinct lists of limits get. */
    static final int MAX_RESOLVED = 1000;
    /** Unlimited: the store is not asked, no rate-limit headers. */
    static final Branch UNLIMITED = new Branch(null, Map.of(), Map.of(), -1);

    private static final Logger LOG = LoggerFactory.getLogger(LimitChoice.class);

    private final Branch base;
    private final Function<List<Limit>, RateLimiter> builder;
    private final HeaderStyle headers;
    private final String where;
    private final TierSource tierSource;
    private final Map<String, Branch> tiers;
    private final String[] tierNames;
    private final Branch[] tierBranches;
    private final LimitResolver limitResolver;
    /** The listeners the limiters publish metrics to, told which limiter decides after an override. */
    private final Meters meters;
    private final Map<List<Limit>, Branch> resolved = new ConcurrentHashMap<>();
    private final AtomicBoolean warnedResolved = new AtomicBoolean();

    /**
     * One way a request may be decided: a limiter ({@code null}: unlimited) and the draft's
     * {@code q} and {@code w} of its limits and of its local limits ({@code failure-mode=local}),
     * computed once. {@code scaledIndex} is a limit the local limiter scaled, which tells its
     * decisions apart; -1 if it scaled none.
     */
    record Branch(RateLimiter limiter, Map<String, RateLimitHeaders.QuotaWindow> stored,
                  Map<String, RateLimitHeaders.QuotaWindow> local, int scaledIndex) {
        /** The branch of a limiter, warning of policy names draft headers may not like. */
        static Branch of(RateLimiter limiter, HeaderStyle headers, String where) {
            RateLimitHeaders.warnOfNonTokenPolicies(limiter.limits(), headers, where);
            Map<String, RateLimitHeaders.QuotaWindow> stored = RateLimitHeaders.windows(limiter.limits());
            List<Limit> local = limiter.localLimits();
            int scaled = -1;
            for (int i = local.size() - 1; i >= 0; i--) {
                scaled = local.get(i) != limiter.limits().get(i) ? i : scaled;
            }
            return new Branch(limiter, stored, scaled < 0 ? stored : RateLimitHeaders.windows(local), scaled);
        }

        /** The {@code q} and {@code w} of the limits that made {@code decision}: the local ones, or the store's. */
        Map<String, RateLimitHeaders.QuotaWindow> windows(Decision decision) {
            boolean local = scaledIndex >= 0 && decision.quotas().size() > scaledIndex
                    && decision.quotas().get(scaledIndex).limit() == limiter.localLimits().get(scaledIndex);
            return local ? this.local : stored;
        }
    }

    private LimitChoice(Branch base, Function<List<Limit>, RateLimiter> builder, HeaderStyle headers, String where,
                        TierSource tierSource, Map<String, Branch> tiers, LimitResolver limitResolver, Meters meters) {
        this.base = base;
        this.builder = builder;
        this.headers = headers;
        this.where = where;
        this.tierSource = tierSource;
        this.tiers = Map.copyOf(tiers);
        this.tierNames = tiers.keySet().toArray(new String[0]); // in tier-limits order, for role
        this.tierBranches = tiers.values().toArray(new Branch[0]);
        this.limitResolver = limitResolver;
        this.meters = meters;
    }

    /** Always the limits of {@code limiter}; {@code builder} builds a resolver's limiters. */
    static LimitChoice fixed(RateLimiter limiter, Function<List<Limit>, RateLimiter> builder, HeaderStyle headers,
                             String where) {
        return new LimitChoice(Branch.of(limiter, headers, where), builder, headers, where, null, Map.of(), null,
                Meters.NONE);
    }

    /**
     * The limiters of {@code routes}, decided together: {@code own}, of their own limits, and one
     * per tier named by any of them (each route's limit of that tier, or its own limit if it names
     * no such tier; a tier unlimited on every route asks no store), built by {@code builder}, whose
     * limiters publish to {@code meters}.
     *
     * @throws IllegalArgumentException if the routes name tiers but {@code tierSource} is {@code null}
     */
    static LimitChoice of(List<RouteSpec> routes, TierSource tierSource, RateLimiter own,
                          Function<List<Limit>, RateLimiter> builder, HeaderStyle headers, String where,
                          Meters meters) {
        Set<String> names = new LinkedHashSet<>();
        routes.forEach(route -> route.tiers().forEach(tier -> names.add(tier.name())));
        if (!names.isEmpty() && tierSource == null) {
            throw new IllegalArgumentException(
                    "'tier-limits' needs 'tier' (role, attribute:NAME or header:NAME) to tell "
                    + "a request's tier, got '" + String.join(",", routes.stream().flatMap(r -> r.tiers().stream())
                    .map(Tier::toString).toList()) + "'");
        }
        Map<String, Branch> tiers = new LinkedHashMap<>();
        for (String name : names) {
            List<Limit> limits = new ArrayList<>();
            for (RouteSpec route : routes) {
                Tier tier = route.tiers().stream().filter(t -> t.name().equals(name)).findFirst().orElse(null);
                if (tier == null || !tier.unlimited()) {
                    limits.add(tier == null ? route.limit() : tier.limit());
                }
            }
            tiers.put(name, limits.isEmpty() ? UNLIMITED : Branch.of(builder.apply(limits), headers, where));
        }
        return new LimitChoice(Branch.of(own, headers, where), builder, headers, where, tierSource, tiers, null,
                meters);
    }

    /** This choice with the resolver deciding instead of the tiers. */
    LimitChoice withResolver(LimitResolver newResolver) {
        return new LimitChoice(base, builder, headers, where, tierSource, Map.of(), newResolver, meters);
    }

    /**
     * This choice with each limit of the route's own limiter and of its tiers' replaced by
     * {@code override}'s answer: a branch whose limits all stay keeps its limiter (and its
     * circuit); another gets one built now, on the same store, so that the stores' rules for a
     * changed limit apply to its callers' state. A {@link LimitResolver}'s limits are the
     * application's code's and stay as it returns them.
     */
    LimitChoice withOverrides(java.util.function.UnaryOperator<Limit> override) {
        Map<String, Branch> newTiers = new LinkedHashMap<>();
        for (int i = 0; i < tierNames.length; i++) {
            newTiers.put(tierNames[i], overridden(tierBranches[i], override));
        }
        return new LimitChoice(overridden(base, override), builder, headers, where, tierSource, newTiers, limitResolver,
                meters);
    }

    /**
     * Tells the meters of each limiter of this choice that was not deciding in {@code was} (a
     * choice of the same route, its limiters in the same places) the state of its circuit: the
     * circuit gauge then follows the limiter deciding now.
     */
    void replacing(LimitChoice was) {
        List<RateLimiter> now = limiters();
        List<RateLimiter> before = was.limiters();
        for (int i = 0; i < now.size(); i++) {
            if (i >= before.size() || now.get(i) != before.get(i)) {
                meters.deciding(now.get(i));
            }
        }
    }

    private Branch overridden(Branch branch, java.util.function.UnaryOperator<Limit> override) {
        if (branch.limiter() == null) {
            return branch;
        }
        List<Limit> limits = branch.limiter().limits().stream().map(override).toList();
        return limits.equals(branch.limiter().limits()) ? branch : Branch.of(builder.apply(limits), headers, where);
    }

    /** The limiters of the route's own limits and of its tiers, in that order, without the unlimited ones. */
    List<RateLimiter> limiters() {
        List<RateLimiter> out = new ArrayList<>();
        out.add(base.limiter());
        for (Branch tier : tierBranches) {
            if (tier.limiter() != null) {
                out.add(tier.limiter());
            }
        }
        return out;
    }

    /** The route's own limits (the default tier). */
    Branch base() {
        return base;
    }

    /** The limits this request is decided by. */
    Branch of(RequestView request) {
        if (limitResolver != null) {
            return resolved(limitResolver.limits(request));
        }
        if (tierNames.length == 0) {
            return base;
        }
        if (tierSource.kind() == TierSource.Kind.ROLE) {
            for (int i = 0; i < tierNames.length; i++) {
                if (request.userInRole(tierNames[i])) {
                    return tierBranches[i];
                }
            }
            return base;
        }
        String name = tierSource.read(request);
        Branch tier = name == null ? null : tiers.get(name.trim());
        return tier != null ? tier : base;
    }

    private Branch resolved(List<Limit> limits) {
        if (limits == null) {
            return base;
        }
        if (limits.isEmpty()) {
            return UNLIMITED;
        }
        Branch known = resolved.get(limits);
        if (known != null) {
            return known;
        }
        if (resolved.size() >= MAX_RESOLVED) {
            if (warnedResolved.compareAndSet(false, true)) {
                LOG.warn("{}: the LimitResolver returned more than {} distinct lists of limits; requests of further "
                        + "ones are decided by the route's own limits. Return lists built once, not per request",
                        where, MAX_RESOLVED);
            }
            return base;
        }
        return resolved.computeIfAbsent(List.copyOf(limits), some -> Branch.of(builder.apply(some), headers, where));
    }

    @Override
    public String toString() {
        return base.limiter() + (limitResolver != null ? ", limits by " + limitResolver
                : tierNames.length == 0 ? "" : ", tiers " + String.join(",", tierNames) + " by " + tierSource);
    }
}
