package dev.sluice.web.internal;

import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.PolicyRegistry;
import dev.sluice.web.PolicyView;
import dev.sluice.RateLimiter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;

/**
 * The {@link PolicyRegistry} of one web application: the adapters {@link #register} each route's
 * {@link Guard} when they build it and {@link #unregister} it when they stop. While any route is
 * registered, one daemon thread ({@code sluice-overrides}) reads every store's overrides each
 * {@link PolicyRegistry#REFRESH_SECONDS} seconds and applies the changed ones.
 *
 * <p>An override is stored as {@code <limit>|<burst>|<instant>|configured=<limit>,<burst>|<principal>},
 * the configured limit being the one of the instance that set it; older versions wrote
 * {@code <limit>|<burst>|<instant>|<principal>}, which is read too.
 *
 * <p>Each instance logs at WARN each override it applies that differs from its configured limit,
 * and each it cannot apply, once per override and configuration (when it starts with one in the
 * store, and when one changes): the instance that set it is not the only one whose clients see it.
 *
 * <p>Thread-safe: changes are serialised on the registry; decisions only read a guard's volatile
 * choice of limiters.
 */
public final class ApplicationPolicies implements PolicyRegistry {

    /** The longest a console call waits on the store. */
    private static final Duration STORE_WAIT = Duration.ofSeconds(5);
    /** The seconds of traffic a view carries. */
    private static final int SERIES_SECONDS = 120;
    private static final int TOP = 10;
    /**
     * Failed refreshes in a row before a warning: a store still connecting at start-up (a Redis
     * store waits up to 2 s) is not worth one.
     */
    private static final int FAILURES_WARNED = 3;
    private static final Logger LOG = LoggerFactory.getLogger(ApplicationPolicies.class);

    /** A registered route: its guard and the store it decides on. */
    private record Route(Guard guard, RateLimitStore store, String storeValue) {
    }

    private final List<Route> routes = new ArrayList<>();
    /** The overrides last read from each store, raw; applied to its routes. */
    private final Map<RateLimitStore, Map<String, String>> applied = new IdentityHashMap<>();
    /**
     * Per policy, the override and configured limit last logged ({@link #announce}), so that
     * each is logged once per instance.
     */
    private final Map<String, String> announced = new HashMap<>();
    /** The policies whose override was last logged as deciding instead of the configured limit. */
    private final Set<String> overridden = new java.util.HashSet<>();
    private ScheduledExecutorService refresher;
    /** Refreshes failed in a row; warned of at {@link #FAILURES_WARNED}. */
    private int refreshFailures;

    /** An empty registry; one per application. */
    public ApplicationPolicies() {
    }

    /**
     * Adds a route, applying the overrides its store holds; starts the refresh with the first.
     *
     * @param storeValue the {@code store} value, shown redacted; {@code null} for a store given in Java
     */
    public synchronized void register(Guard guard, RateLimitStore store, String storeValue) {
        Route route = new Route(Objects.requireNonNull(guard, "guard"), Objects.requireNonNull(store, "store"),
                storeValue);
        routes.add(route);
        Map<String, String> known = applied.get(store);
        if (known != null) {
            guard.override(overrides(known));
            announce();
        }
        if (refresher == null) {
            refresher = Executors.newSingleThreadScheduledExecutor(task -> {
                Thread thread = new Thread(task, "sluice-overrides");
                thread.setDaemon(true);
                return thread;
            });
            refresher.scheduleWithFixedDelay(this::refreshQuietly, 0, REFRESH_SECONDS, TimeUnit.SECONDS);
        }
    }

    /** Removes a route; the refresh stops with the last. */
    public synchronized void unregister(Guard guard) {
        routes.removeIf(route -> route.guard == guard);
        Set<RateLimitStore> stores = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        routes.forEach(route -> stores.add(route.store));
        applied.keySet().retainAll(stores);
        if (routes.isEmpty() && refresher != null) {
            refresher.shutdownNow();
            refresher = null;
        }
    }

    @Override
    public synchronized List<PolicyView> policies() {
        Map<String, List<Route>> byPolicy = byPolicy();
        List<PolicyView> out = new ArrayList<>();
        byPolicy.forEach((name, of) -> out.add(view(name, of)));
        return List.copyOf(out);
    }

    @Override
    public synchronized Optional<PolicyView> policy(String name) {
        List<Route> of = byPolicy().get(name);
        return of == null ? Optional.empty() : Optional.of(view(name, of));
    }

    @Override
    public List<String> reset(String policy, String caller) {
        Objects.requireNonNull(caller, "caller");
        List<Route> of;
        synchronized (this) {
            of = routesOf(policy);
        }
        Set<String> done = new LinkedHashSet<>();
        for (Route route : of) {
            List<String> identities = route.guard.identitiesOf(caller);
            for (RateLimiter limiter : route.guard.currentChoice().limiters()) {
                for (Limit limit : limiter.limits()) {
                    if (!limit.policy().equals(policy)) {
                        continue;
                    }
                    for (String identity : identities) {
                        await(limiter.store().reset(identity, List.of(limit)), "reset the caller");
                        route.guard.traffic().forget(identity);
                        done.add(identity);
                    }
                }
            }
        }
        if (done.isEmpty()) {
            throw new IllegalArgumentException("caller '" + caller + "' fits none of the key sources of policy '" + policy
                    + "' (key " + KeySource.format(of.get(0).guard.resolver().sources()) + ")");
        }
        LOG.info("Sluice policy '{}': caller {} reset", policy, done);
        return List.copyOf(done);
    }

    @Override
    public void override(String policy, String limit, String burst, String principal) {
        Objects.requireNonNull(limit, "limit");
        String by = principal == null || principal.isBlank() ? "anonymous" : principal;
        Limit was;
        Limit now;
        synchronized (this) {
            List<Route> of = routesOf(policy);
            was = configured(of, policy);
            now = parse(was, limit, burst); // throws the parameter's message: nothing changed
            for (Route route : of) {
                parse(configured(List.of(route), policy), limit, burst);
            }
            store(of, policy, new Stored(limit.trim(), burst == null ? "" : burst.trim(), Instant.now(), signature(was),
                    by).raw());
        }
        LOG.info("Sluice policy '{}': limit overridden by {} at {}: {} (configured {})", policy, by, Instant.now(),
                describe(now), describe(was));
    }

    @Override
    public void clearOverride(String policy, String principal) {
        String by = principal == null || principal.isBlank() ? "anonymous" : principal;
        Limit was;
        synchronized (this) {
            List<Route> of = routesOf(policy);
            was = configured(of, policy);
            store(of, policy, null);
        }
        LOG.info("Sluice policy '{}': override cleared by {} at {}: {} again", policy, by, Instant.now(), describe(was));
    }

    /** Writes (or clears) the override in every store of the policy's routes, and applies it here at once. */
    private void store(List<Route> of, String policy, String raw) {
        Set<RateLimitStore> stores = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        of.forEach(route -> stores.add(route.store));
        for (RateLimitStore store : stores) {
            await(store.putOverride(policy, raw), raw == null ? "clear the override" : "keep the override");
            Map<String, String> known = new HashMap<>(applied.getOrDefault(store, Map.of()));
            if (raw == null) {
                known.remove(policy);
            } else {
                known.put(policy, raw);
            }
            apply(store, known);
        }
    }

    /** Reads every store's overrides and applies those that changed; a failing store keeps what was applied. */
    synchronized void refresh() {
        Set<RateLimitStore> stores = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        routes.forEach(route -> stores.add(route.store));
        for (RateLimitStore store : stores) {
            Map<String, String> read;
            try {
                read = store.overrides().toCompletableFuture().get(STORE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnsupportedOperationException) {
                    continue; // a store of the application's own that keeps none: nothing to apply
                }
                failing(e.getCause());
                continue;
            } catch (TimeoutException e) {
                failing(e);
                continue;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (refreshFailures >= FAILURES_WARNED) {
                LOG.info("Sluice: limit overrides are read from the store again");
            }
            refreshFailures = 0;
            if (!read.equals(applied.get(store))) {
                apply(store, read);
            }
        }
    }

    private void refreshQuietly() {
        try {
            refresh();
        } catch (RuntimeException e) {
            failing(e); // the refresh goes on: a scheduled task that throws is never run again
        }
    }

    private void failing(Throwable e) {
        if (++refreshFailures == FAILURES_WARNED) {
            // The exception's class only: a store's message could carry its address with a password.
            LOG.warn("Sluice: limit overrides cannot be read from the store ({}); the ones applied stay until it "
                    + "answers", e.getClass().getName());
        }
    }

    private void apply(RateLimitStore store, Map<String, String> overrides) {
        applied.put(store, Map.copyOf(overrides));
        UnaryOperator<Limit> override = overrides(overrides);
        for (Route route : routes) {
            if (route.store == store) {
                route.guard.override(override);
            }
        }
        announce();
    }

    /** The limits of {@code overrides}: each limit's override, or the limit itself if there is none or it is bad. */
    private static UnaryOperator<Limit> overrides(Map<String, String> overrides) {
        return limit -> {
            String raw = overrides.get(limit.policy());
            if (raw == null) {
                return limit;
            }
            Stored stored = Stored.parse(raw);
            try {
                return parse(limit, stored.limit(), stored.burst());
            } catch (IllegalArgumentException e) {
                return limit; // logged by announce
            }
        };
    }

    /**
     * Logs what changed in the overrides this instance applies, once per override and configured
     * limit: at WARN an override that decides instead of the configured limit, or that cannot be
     * applied; at INFO the configured limit deciding again. On every instance, not only the one
     * that set it: a forgotten override beats a new deployment's configuration silently otherwise.
     * Names no store: its address may carry a password.
     */
    private void announce() {
        Map<String, List<Route>> byPolicy = byPolicy();
        announced.keySet().retainAll(byPolicy.keySet());
        overridden.retainAll(byPolicy.keySet());
        byPolicy.forEach((name, of) -> {
            String raw = applied.getOrDefault(of.get(0).store, Map.of()).get(name);
            Limit configured = configured(of, name);
            String key = raw + "\n" + signature(configured);
            if (key.equals(announced.put(name, key))) {
                return;
            }
            Stored stored = raw == null ? null : Stored.parse(raw);
            String problem = stored == null ? null : notApplied(of, name, stored);
            Limit now = stored == null || problem != null ? configured : parse(configured, stored.limit(), stored.burst());
            if (problem != null) {
                LOG.warn("Sluice policy '{}': the override in the store is not applied: {}; the configured limit {} "
                        + "decides", name, problem, describe(configured));
            } else if (!signature(now).equals(signature(configured))) {
                LOG.warn("Sluice policy '{}': the override {} decides instead of the configured limit {} (set by {} at "
                        + "{}{})", name, describe(now), describe(configured), stored.by(),
                        stored.at() == null ? "an unknown time" : stored.at(),
                        changed(stored, configured) ? ", when " + describe(stored.configured()) + " was configured" : "");
                overridden.add(name);
                return;
            }
            if (overridden.remove(name) && problem == null) {
                LOG.info("Sluice policy '{}': the configured limit {} decides again", name, describe(configured));
            }
        });
    }

    /** Why one of {@code of} cannot apply {@code stored}, or {@code null}: all can. */
    private static String notApplied(List<Route> of, String policy, Stored stored) {
        for (Route route : of) {
            try {
                parse(configured(List.of(route), policy), stored.limit(), stored.burst());
            } catch (IllegalArgumentException e) {
                return e.getMessage();
            }
        }
        return null;
    }

    /** Whether the limit configured here differs from the one {@code stored} was set against, when it says. */
    private static boolean changed(Stored stored, Limit configured) {
        return stored.configured() != null && !stored.configured().equals(signature(configured));
    }

    /** What an override replaces of a limit, as stored: {@code <count>/<period>,<burst>}. */
    private static String signature(Limit limit) {
        return limit.count() + "/" + dev.sluice.internal.Durations.formatDuration(limit.period()) + "," + limit.burst();
    }

    /** A {@link #signature} as {@link #describe} writes a limit. */
    private static String describe(String signature) {
        int comma = signature.lastIndexOf(',');
        return comma < 0 ? signature : signature.substring(0, comma) + " burst " + signature.substring(comma + 1);
    }

    /**
     * An override as the store keeps it. Its fields are never checked here: what decides is
     * {@link #parse}d against each configured limit.
     *
     * @param configured the {@link #signature} of the limit configured where it was set, or {@code null}
     * @param at         when it was set, or {@code null} if written by hand
     */
    private record Stored(String limit, String burst, Instant at, String configured, String by) {

        private static final String CONFIGURED = "configured=";

        static Stored parse(String raw) {
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
            return new Stored(fields[0], fields.length > 1 && !fields[1].isEmpty() ? fields[1] : null, at, configured,
                    rest);
        }

        String raw() {
            return limit + "|" + (burst == null ? "" : burst) + "|" + (at == null ? "" : at) + "|" + CONFIGURED
                    + configured + "|" + by;
        }
    }

    /**
     * {@code configured} with another {@code limit} and {@code burst}, parsed by the code that
     * parses the parameters, with its messages.
     */
    static Limit parse(Limit configured, String limit, String burst) {
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

    private static String describe(Limit limit) {
        if (!limit.algorithm().isRate()) {
            return limit.count() + " in flight"; // a cap's period is no rate's
        }
        return limit.count() + "/" + dev.sluice.internal.Durations.formatDuration(limit.period())
                + (limit.algorithm().hasBurst() ? " burst " + limit.burst() : "");
    }

    private static void await(java.util.concurrent.CompletionStage<?> stage, String what) {
        try {
            stage.toCompletableFuture().get(STORE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted before the store could " + what, e);
        } catch (ExecutionException | TimeoutException e) {
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            if (cause instanceof UnsupportedOperationException) {
                throw new IllegalStateException("the store cannot " + what + ": " + cause.getMessage(), cause);
            }
            // The exception's class only: a store's message could carry its address with a password.
            throw new IllegalStateException("the store did not " + what + " (" + cause.getClass().getName() + ")");
        }
    }

    /** The routes deciding {@code policy}, not empty. */
    private List<Route> routesOf(String policy) {
        List<Route> of = byPolicy().get(Objects.requireNonNull(policy, "policy"));
        if (of == null) {
            throw new IllegalArgumentException("no policy '" + policy + "' in this application");
        }
        return of;
    }

    /** The configured limit of {@code policy} on the first of {@code of}. */
    private static Limit configured(List<Route> of, String policy) {
        for (Route route : of) {
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
            if (route.guard.concurrencyLimiter() != null && route.guard.concurrencyLimiter().limit().policy().equals(policy)) {
                return route.guard.concurrencyLimiter().limit();
            }
        }
        throw new IllegalArgumentException("no policy '" + policy + "' in this application");
    }

    /** The routes of each policy name, in the order the routes and their limits came. */
    private Map<String, List<Route>> byPolicy() {
        Map<String, List<Route>> out = new LinkedHashMap<>();
        for (Route route : routes) {
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

    private PolicyView view(String name, List<Route> of) {
        Limit configured = configured(of, name);
        Limit effective = configured;
        Route first = of.get(0);
        LimitChoice current = first.guard.currentChoice();
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
        String raw = applied.getOrDefault(first.store, Map.of()).get(name);
        if (raw != null) {
            Stored stored = Stored.parse(raw);
            String then = stored.configured();
            int comma = then == null ? -1 : then.lastIndexOf(',');
            PolicyView.ConfiguredLimit whenSet = null;
            try {
                whenSet = comma < 0 ? null
                        : new PolicyView.ConfiguredLimit(then.substring(0, comma), Long.parseLong(then.substring(comma + 1)));
            } catch (NumberFormatException e) {
                // written by hand: not shown
            }
            override = new PolicyView.Override(stored.limit(), stored.burst(), stored.by(), stored.at(), whenSet,
                    whenSet != null && changed(stored, configured), notApplied(of, name, stored));
        }
        Map<String, Long> counts = new LinkedHashMap<>();
        long[][] series = new long[2][SERIES_SECONDS];
        Map<String, PolicyView.Refused> top = new LinkedHashMap<>();
        List<String> where = new ArrayList<>();
        for (Route route : of) {
            where.add(route.guard.where());
            Traffic traffic = route.guard.traffic();
            traffic.counts().forEach((outcome, n) -> counts.merge(outcome, n, Long::sum));
            long[][] own = traffic.perSecond(SERIES_SECONDS);
            for (int i = 0; i < SERIES_SECONDS; i++) {
                series[0][i] += own[0][i];
                series[1][i] += own[1][i];
            }
            for (Traffic.Refused refused : traffic.topRefused(TOP)) {
                top.merge(refused.identity(), new PolicyView.Refused(refused.partition(), refused.identity(),
                        refused.count()), (a, b) -> new PolicyView.Refused(a.partition(), a.identity(), a.count() + b.count()));
            }
        }
        List<PolicyView.Refused> topList = new ArrayList<>(top.values());
        topList.sort((a, b) -> Long.compare(b.count(), a.count()));
        return new PolicyView(name, where, configured, effective, override,
                first.storeValue == null ? first.store.getClass().getSimpleName() : WebSettings.shown(first.storeValue),
                failureMode(first), circuitOpen, KeySource.format(first.guard.resolver().sources()), counts,
                java.util.Arrays.stream(series[0]).boxed().toList(), java.util.Arrays.stream(series[1]).boxed().toList(),
                topList.subList(0, Math.min(TOP, topList.size())));
    }

    private static dev.sluice.FailureMode failureMode(Route route) {
        RateLimiter limiter = route.guard.limiter();
        return limiter != null ? limiter.failureMode() : route.guard.concurrencyLimiter().failureMode();
    }
}
