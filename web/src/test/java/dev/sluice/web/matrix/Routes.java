package dev.sluice.web.matrix;

import dev.sluice.testing.TestRedis;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What every {@link Adapter} serves: apps (application-wide settings) times routes (the limits of
 * one path). An adapter that writes limits in annotations keeps one annotated resource per route,
 * with the same values; keep them in step with {@link #ALL}.
 */
public final class Routes {

    /** Callers are told apart by this header, so that scenarios sharing one Redis never meet. */
    public static final String CLIENT = "X-Client";
    /** The {@code key} of every route. */
    public static final String KEY = "header:" + CLIENT;

    /** One a minute: the second request is refused. */
    public static final Route ONE = new Route("one", Map.of("policy", "one", "limit", "1/1m", "key", KEY));
    /** Three a minute at two a request: one unit is left after the first, too few for the second. */
    public static final Route COSTLY = new Route("costly",
            Map.of("policy", "costly", "limit", "3/1m", "cost", "2", "key", KEY));
    /** Five a minute: one unit every 12 s. */
    public static final Route FIVE = new Route("five", Map.of("policy", "api.v2", "limit", "5/1m", "key", KEY));
    /** Three a minute: one unit every 20 s. */
    public static final Route THREE = new Route("three", Map.of("policy", "three", "limit", "3/1m", "key", KEY));
    /** Every route, in the order the adapters declare them. */
    public static final List<Route> ALL = List.of(ONE, COSTLY, FIVE, THREE);

    /** The {@code headers} styles each store's apps are started with; an app is named {@code <style>-<store>}. */
    public static final List<String> HEADER_STYLES = List.of("legacy", "draft", "draft-10", "both", "none");

    private Routes() {
    }

    /** The stores of the matrix. */
    public enum Store {
        MEMORY, REDIS;

        /** The value of {@code store}. */
        String url() {
            return this == MEMORY ? "memory" : TestRedis.shared().url();
        }

        /** The app name's suffix. */
        String suffix() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** One route's limits as init-params (the parameter vocabulary); served at {@code /<app>/<name>}. */
    public record Route(String name, Map<String, String> limits) {
    }

    /** Application-wide settings: the filters' init-params, the feature's and the starter's {@code sluice.*}. */
    public record App(String name, Map<String, String> settings) {

        /** The parameters of {@code route} in this app: the app's settings, then the route's limits. */
        public Map<String, String> parameters(Route route) {
            Map<String, String> all = new LinkedHashMap<>(settings);
            all.putAll(route.limits());
            return all;
        }
    }

    /** The apps of {@code store}: one per header style. */
    static List<App> apps(Store store) {
        List<App> apps = new ArrayList<>();
        // A live Redis: a generous timeout, so that a busy machine never fails a decision open.
        String timeout = store == Store.MEMORY ? "100ms" : "2s";
        for (String style : HEADER_STYLES) {
            apps.add(new App(style + "-" + store.suffix(),
                    Map.of("headers", style, "store", store.url(), "timeout", timeout)));
        }
        return apps;
    }
}
