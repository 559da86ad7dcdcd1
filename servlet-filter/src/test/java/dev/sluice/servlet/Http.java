package dev.sluice.servlet;

import org.eclipse.jetty.util.ajax.JSON;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/** Real HTTP/1.1 calls over loopback with {@link HttpClient}. */
final class Http {

    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private Http() {
    }

    /** GET with request headers given as {@code name, value, name, value...}. */
    static HttpResponse<String> get(URI uri, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET();
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        try {
            return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A response header, or {@code null}. */
    static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
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
