package dev.sluice.web.internal;

import dev.sluice.ConcurrencyLimiter;
import dev.sluice.DecisionListener;
import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.RateLimiter;
import dev.sluice.metrics.OptionalMetrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The routes one {@link Guard} decides together (repeated {@code @RateLimit}s on one method, or
 * one filter's route), checked at start-up and turned into limiters: they name one {@code key}
 * and one {@code methods}, at most one limit of {@code algorithm=concurrency} (the cap), and the
 * rate limits agree on {@code charge} and {@code charge-when}. The rate limits fail as the
 * strictest route says (closed, then local, then open); the cap fails closed when any route does,
 * otherwise as its own route says, and a cap cannot fail locally (its leases are held in the store
 * alone), which {@link ConcurrencyLimiter} refuses naming {@code 'failure-mode'}.
 *
 * <p>Errors are {@link IllegalArgumentException}s naming the parameters and values, which the
 * adapters prefix with the route.
 */
final class RouteGroup {

    private final RouteSpec first;
    /** The routes of rate limits, in order; empty when there is only a cap. */
    private final List<RouteSpec> rates;
    /** The route of the concurrency limit; {@code null}: none. */
    private final RouteSpec cap;
    private final Charging charging;
    /** The strictest failure mode of the routes. */
    private final FailureMode failureMode;

    private RouteGroup(RouteSpec first, List<RouteSpec> rates, RouteSpec cap, Charging charging,
                       FailureMode failureMode) {
        this.first = first;
        this.rates = List.copyOf(rates);
        this.cap = cap;
        this.charging = charging;
        this.failureMode = failureMode;
    }

    /**
     * Checks that {@code routes} can be decided together.
     *
     * @throws IllegalArgumentException if the routes name different keys (they are decided for one
     *                                  caller) or {@code methods}, two concurrency limits, or
     *                                  charge differently
     */
    static RouteGroup of(List<RouteSpec> routes) {
        RouteSpec first = routes.get(0);
        List<RouteSpec> rates = new ArrayList<>();
        RouteSpec cap = null;
        Charging charging = null;
        FailureMode failureMode = FailureMode.OPEN;
        for (RouteSpec route : routes) {
            if (!route.key().equals(first.key())) {
                throw new IllegalArgumentException("repeated limits are decided together for one caller, so they must "
                        + "share one 'key', got '" + KeySource.format(first.key()) + "' (policy '"
                        + first.limit().policy() + "') and '" + KeySource.format(route.key()) + "' (policy '"
                        + route.limit().policy() + "')");
            }
            if (!route.methods().equals(first.methods())) {
                throw new IllegalArgumentException("repeated limits are decided together, so they must share one "
                        + "'methods', got '" + String.join(",", first.methods()) + "' (policy '" + first.limit()
                        .policy()
                        + "') and '" + String.join(",", route.methods()) + "' (policy '" + route.limit().policy()
                        + "')");
            }
            if (!route.limit().algorithm().isRate()) {
                if (cap != null) {
                    throw new IllegalArgumentException("a route takes at most one lease, so at most one limit of "
                            + "algorithm concurrency, got policies '" + cap.limit().policy() + "' and '"
                            + route.limit().policy() + "'");
                }
                cap = route;
            } else if (charging != null && !charging.equals(route.charging())) {
                throw new IllegalArgumentException(
                        "repeated limits are charged together, so they must share 'charge' and "
                        + "'charge-when', got '" + charging + "' and '" + route.charging() + "' (policy '"
                        + route.limit().policy() + "')");
            } else {
                charging = route.charging();
                rates.add(route);
            }
            if (route.failureMode() == FailureMode.CLOSED
                    || route.failureMode() == FailureMode.LOCAL && failureMode == FailureMode.OPEN) {
                failureMode = route.failureMode(); // the strictest: closed, then local, then open
            }
        }
        return new RouteGroup(first, rates, cap, charging == null ? Charging.BEFORE : charging, failureMode);
    }

    /**
     * The rate limits' choice: one limiter of the routes' own limits, and one per tier and per
     * resolved list sharing its store and settings, each publishing metrics under its own
     * policies (a limiter built again for the same policies, by an override, to the same meters);
     * {@code null} when the group has only a cap.
     *
     * @throws IllegalArgumentException if the routes name tiers but {@code tier} is {@code null}
     */
    LimitChoice rateLimits(WebSettings web, TierSource tier, RateLimitStore store, Object meterRegistry, String where) {
        if (rates.isEmpty()) {
            return null;
        }
        List<Limit> own = rates.stream().map(RouteSpec::limit).toList();
        Meters meters = new Meters(web.metrics(), meterRegistry);
        RateLimiter limiter = RateLimiter.builder().limits(own).store(store).failureMode(failureMode)
                .timeout(web.timeout()).shadowMode(web.shadow()).localShare(web.localShare())
                .listener(meters.of(own)).build();
        return LimitChoice.of(rates, tier, limiter, limits -> limiter.withLimits(limits, meters.of(limits)),
                web.headers(), where, meters);
    }

    /**
     * The concurrency limiter of the cap, or {@code null}: closed when any route fails closed,
     * otherwise as the cap's own route says.
     *
     * @throws IllegalArgumentException if the cap's route says {@code failure-mode=local}
     */
    ConcurrencyLimiter concurrency(WebSettings web, RateLimitStore store, Object meterRegistry) {
        if (cap == null) {
            return null;
        }
        FailureMode own = cap.failureMode();
        FailureMode mode = failureMode == FailureMode.CLOSED && own != FailureMode.LOCAL ? FailureMode.CLOSED : own;
        return ConcurrencyLimiter.builder().limit(cap.limit()).store(store).failureMode(mode).timeout(web.timeout())
                .shadowMode(web.shadow()).listener(metrics(web, meterRegistry, List.of(cap.limit()))).build();
    }

    private static DecisionListener metrics(WebSettings web, Object meterRegistry, List<Limit> limits) {
        return OptionalMetrics.listener(web.metrics(), meterRegistry,
                limits.stream().map(Limit::policy).collect(Collectors.joining("+")));
    }

    /** When the rate limits charge. */
    Charging charging() {
        return charging;
    }

    /** The key the routes share. */
    List<KeySource> key() {
        return first.key();
    }

    /** The methods the routes share. */
    Set<String> methods() {
        return first.methods();
    }
}
