package dev.sluice.web.internal;

import dev.sluice.FailureMode;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.web.PolicyView;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The console's view of one policy over the routes that decide it: limits, override, traffic. */
final class PolicyViews {

    /** The seconds of traffic a view carries. */
    private static final int SERIES_SECONDS = 120;
    private static final int TOP = 10;

    private PolicyViews() {
    }

    /**
     * The view of {@code name}, decided by {@code of}.
     *
     * @param overrides the overrides applied from the store of the first of {@code of}
     */
    static PolicyView view(String name, List<PolicyRoute> of, Map<String, String> overrides) {
        Limit configured = PolicyRoute.configured(of, name);
        Limit effective = configured;
        PolicyRoute first = of.get(0);
        LimitChoice current = first.guard().currentChoice();
        boolean circuitOpen = false;
        if (current != null) {
            for (RateLimiter limiter : current.limiters()) {
                circuitOpen |= limiter.storeCircuitOpen();
                for (Limit limit : limiter.limits()) {
                    effective = limit.policy().equals(name) ? limit : effective;
                }
            }
        }
        PolicyView.Override override = null;
        String raw = overrides.get(name);
        if (raw != null) {
            StoredOverride stored = StoredOverride.parse(raw);
            String then = stored.configured();
            int comma = then == null ? -1 : then.lastIndexOf(',');
            PolicyView.ConfiguredLimit whenSet = null;
            try {
                whenSet = comma < 0 ? null : new PolicyView.ConfiguredLimit(then.substring(0, comma),
                        Long.parseLong(then.substring(comma + 1)));
            } catch (NumberFormatException e) {
                // written by hand: not shown
            }
            override = new PolicyView.Override(stored.limit(), stored.burst(), stored.by(), stored.at(), whenSet,
                    whenSet != null && stored.changed(configured), PolicyRoute.notApplied(of, name, stored));
        }
        Map<String, Long> counts = new LinkedHashMap<>();
        long[][] series = new long[2][SERIES_SECONDS];
        Map<String, PolicyView.Refused> top = new LinkedHashMap<>();
        List<String> where = new ArrayList<>();
        for (PolicyRoute route : of) {
            where.add(route.guard().where());
            Traffic traffic = route.guard().traffic();
            traffic.counts().forEach((outcome, n) -> counts.merge(outcome, n, Long::sum));
            long[][] own = traffic.perSecond(SERIES_SECONDS);
            for (int i = 0; i < SERIES_SECONDS; i++) {
                series[0][i] += own[0][i];
                series[1][i] += own[1][i];
            }
            for (Traffic.Refused refused : traffic.topRefused(TOP)) {
                top.merge(refused.identity(), new PolicyView.Refused(refused.partition(), refused.identity(),
                        refused.count()), (a, b) -> new PolicyView.Refused(a.partition(), a.identity(),
                        a.count() + b.count()));
            }
        }
        List<PolicyView.Refused> topList = new ArrayList<>(top.values());
        topList.sort((a, b) -> Long.compare(b.count(), a.count()));
        return new PolicyView(name, where, configured, effective, override,
                first.storeValue() == null ? first.store().getClass().getSimpleName()
                        : WebSettings.shown(first.storeValue()),
                failureMode(first), circuitOpen, KeySource.format(first.guard().resolver().sources()), counts,
                Arrays.stream(series[0]).boxed().toList(), Arrays.stream(series[1]).boxed().toList(),
                topList.subList(0, Math.min(TOP, topList.size())));
    }

    private static FailureMode failureMode(PolicyRoute route) {
        RateLimiter limiter = route.guard().limiter();
        return limiter != null ? limiter.failureMode() : route.guard().concurrencyLimiter().failureMode();
    }
}
