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

    /**
     * Sends {@code method uri} until the answer carries {@code RateLimit-Limit} (the store decided:
     * a Redis client connecting when the application starts fails the first decisions open), for at
     * most 20 s. Use a caller of its own: the answers it gets are charged.
     */
    static void awaitDecided(String method, URI uri, String... headers) throws InterruptedException {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
        while (header(HttpCalls.send(method, uri, headers), "RateLimit-Limit") == null
                && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
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
