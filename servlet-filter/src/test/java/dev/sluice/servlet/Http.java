package dev.sluice.servlet;

import dev.sluice.testing.HttpCalls;
import org.eclipse.jetty.util.ajax.JSON;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.Map;

/** Real HTTP/1.1 calls over loopback ({@link HttpCalls}), and the problem bodies parsed. */
final class Http {

    private Http() {
    }

    /** GET with request headers given as {@code name, value, name, value...}. */
    static HttpResponse<String> get(URI uri, String... headers) {
        return HttpCalls.send("GET", uri, headers);
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
