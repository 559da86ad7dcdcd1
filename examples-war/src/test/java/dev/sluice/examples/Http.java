package dev.sluice.examples;

import dev.sluice.testing.HttpCalls;
import org.eclipse.jetty.util.ajax.JSON;

import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;

/** Real HTTP/1.1 calls over loopback, as curl makes them. */
final class Http {

    private Http() {
    }

    /** {@code GET base/path} with the API key {@code key} (none if {@code null}). */
    static HttpResponse<String> get(Deployed app, String path, String key) {
        return send(app, "GET", path, key);
    }

    /** {@code POST base/path} with an empty body and the API key {@code key}. */
    static HttpResponse<String> post(Deployed app, String path, String key) {
        return send(app, "POST", path, key);
    }

    private static HttpResponse<String> send(Deployed app, String method, String path, String key) {
        URI uri = app.base().resolve(path);
        return key == null ? HttpCalls.send(method, uri) : HttpCalls.send(method, uri, "X-API-Key", key);
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

    /** The packaged examples WAR, passed by the build. */
    static Path war() {
        String war = System.getProperty("sluice.examples.war");
        if (war == null) {
            throw new IllegalStateException(
                    "system property sluice.examples.war is not set; run through Maven (verify)");
        }
        return Path.of(war);
    }
}
