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
 * <p>An override is kept in the store as {@link StoredOverride} says.
 *
 * <p>Each instance logs the overrides it applies, and those it cannot, once each ({@link OverrideLog}).
 *
 * <p>Thread-safe: changes are serialised on the registry; decisions only read a guard's volatile
 * choice of limiters.
 */
public final class ApplicationPolicies implements PolicyRegistry {

    /** The longest a console call waits on the store. */
    private static final Duration STORE_WAIT = Duration.ofSeconds(5);
    /**
     * Failed refreshes in a row before a warning: a store still connecting at start-up (a Redis
     * store waits up to 2 s) is not worth one.
     */
    private static final int FAILURES_WARNED = 3;
    private static final Logger LOG = LoggerFactory.getLogger(ApplicationPolicies.class);

    private final List<PolicyRoute> routes = new ArrayList<>();
    /** The overrides last read from each store, raw; applied to its routes. */
    private final Map<RateLimitStore, Map<String, String>> applied = new IdentityHashMap<>();
    /** The overrides' changes logged once per instance. */
    private final OverrideLog log = new OverrideLog();
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
        PolicyRoute route = new PolicyRoute(Objects.requireNonNull(guard, "guard"),
                Objects.requireNonNull(store, "store"), storeValue);
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
        routes.removeIf(route -> route.guard() == guard);
        Set<RateLimitStore> stores = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        routes.forEach(route -> stores.add(route.store()));
        applied.keySet().retainAll(stores);
        if (routes.isEmpty() && refresher != null) {
            refresher.shutdownNow();
            refresher = null;
        }
    }

    @Override
    public synchronized List<PolicyView> policies() {
        Map<String, List<PolicyRoute>> byPolicy = byPolicy();
        List<PolicyView> out = new ArrayList<>();
        byPolicy.forEach((name, of) -> out.add(view(name, of)));
        return List.copyOf(out);
    }

    @Override
    public synchronized Optional<PolicyView> policy(String name) {
        List<PolicyRoute> of = byPolicy().get(name);
        return of == null ? Optional.empty() : Optional.of(view(name, of));
    }

    @Override
    public List<String> reset(String policy, String caller) {
        Objects.requireNonNull(caller, "caller");
        List<PolicyRoute> of;
        synchronized (this) {
            of = routesOf(policy);
        }
        Set<String> done = new LinkedHashSet<>();
        for (PolicyRoute route : of) {
            List<String> identities = route.guard().identitiesOf(caller);
            for (RateLimiter limiter : route.guard().currentChoice().limiters()) {
                for (Limit limit : limiter.limits()) {
                    if (!limit.policy().equals(policy)) {
                        continue;
                    }
                    for (String identity : identities) {
                        await(limiter.store().reset(identity, List.of(limit)), "reset the caller");
                        route.guard().traffic().forget(identity);
                        done.add(identity);
                    }
                }
            }
        }
        if (done.isEmpty()) {
            throw new IllegalArgumentException("caller '" + caller + "' fits none of the key sources of policy '"
                    + policy + "' (key " + KeySource.format(of.get(0).guard().resolver().sources()) + ")");
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
            List<PolicyRoute> of = routesOf(policy);
            was = PolicyRoute.configured(of, policy);
            now = StoredOverride.apply(was, limit, burst); // throws the parameter's message: nothing changed
            for (PolicyRoute route : of) {
                StoredOverride.apply(PolicyRoute.configured(List.of(route), policy), limit, burst);
            }
            store(of, policy, new StoredOverride(limit.trim(), burst == null ? "" : burst.trim(), Instant.now(),
                    StoredOverride.signature(was),
                    by).raw());
        }
        LOG.info("Sluice policy '{}': limit overridden by {} at {}: {} (configured {})", policy, by, Instant.now(),
                StoredOverride.describe(now), StoredOverride.describe(was));
    }

    @Override
    public void clearOverride(String policy, String principal) {
        String by = principal == null || principal.isBlank() ? "anonymous" : principal;
        Limit was;
        synchronized (this) {
            List<PolicyRoute> of = routesOf(policy);
            was = PolicyRoute.configured(of, policy);
            store(of, policy, null);
        }
        LOG.info("Sluice policy '{}': override cleared by {} at {}: {} again", policy, by, Instant.now(),
                StoredOverride.describe(was));
    }

    /** Writes (or clears) the override in every store of the policy's routes, and applies it here at once. */
    private void store(List<PolicyRoute> of, String policy, String raw) {
        Set<RateLimitStore> stores = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        of.forEach(route -> stores.add(route.store()));
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
        routes.forEach(route -> stores.add(route.store()));
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
        for (PolicyRoute route : routes) {
            if (route.store() == store) {
                route.guard().override(override);
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
            try {
                return StoredOverride.parse(raw).applyTo(limit);
            } catch (IllegalArgumentException e) {
                return limit; // logged by announce
            }
        };
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
    private List<PolicyRoute> routesOf(String policy) {
        List<PolicyRoute> of = byPolicy().get(Objects.requireNonNull(policy, "policy"));
        if (of == null) {
            throw new IllegalArgumentException("no policy '" + policy + "' in this application");
        }
        return of;
    }

    private Map<String, List<PolicyRoute>> byPolicy() {
        return PolicyRoute.byPolicy(routes);
    }

    private void announce() {
        log.announce(byPolicy(), store -> applied.getOrDefault(store, Map.of()));
    }

    private PolicyView view(String name, List<PolicyRoute> of) {
        return PolicyViews.view(name, of, applied.getOrDefault(of.get(0).store(), Map.of()));
    }
}
