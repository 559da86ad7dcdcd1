package dev.sluice.web.matrix;

import dev.sluice.testing.HttpCalls;
import org.eclipse.jetty.util.ajax.JSON;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

/** One adapter and one store as a scenario sees them: requests by header style and route. */
final class Target {

    private final Adapter.Running running;
    private final Routes.Store store;

    Target(Adapter.Running running, Routes.Store store) {
        this.running = running;
        this.store = store;
    }

    /** A caller of its own: scenarios on one shared Redis never share a budget. */
    static String caller() {
        return UUID.randomUUID().toString();
    }

    /** {@code GET /<style>-<store>/<route>} as {@code caller}. */
    HttpResponse<String> get(String style, Routes.Route route, String caller) {
        return HttpCalls.send("GET", running.uri("/" + style + "-" + store.suffix() + "/" + route.name()),
                Routes.CLIENT, caller);
    }

    /** A response header, or {@code null}. */
    static String header(HttpResponse<?> response, String name) {
        return HttpCalls.header(response, name);
    }

    /** The body parsed as a JSON object; fails the test if it is not one. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> json(HttpResponse<String> response) {
        Object parsed = new JSON().fromJSON(response.body());
        if (!(parsed instanceof Map)) {
            throw new AssertionError("not a JSON object: " + response.body());
        }
        return (Map<String, Object>) parsed;
    }
}
