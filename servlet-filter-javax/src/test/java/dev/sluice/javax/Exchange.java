package dev.sluice.javax;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One request of a sequence and what the filter made of it: the status, the headers the filter
 * writes, and the body and content type (which the filter writes itself only when it rejects).
 * Real HTTP/1.1 over loopback with {@link HttpClient}.
 */
record Exchange(String request, int status, Map<String, String> headers, String contentType, String body) {

    /** Every header a Sluice filter may write. */
    static final List<String> FILTER_HEADERS = List.of("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
            "RateLimit-Policy", "RateLimit", "Retry-After");

    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    /** A request to send: a path and, optionally, an {@code X-API-Key}. */
    record Step(String path, String apiKey) {
        @Override
        public String toString() {
            return "GET " + path + (apiKey == null ? "" : " X-API-Key: " + apiKey);
        }
    }

    static List<Exchange> run(Running app, List<Step> steps) {
        List<Exchange> exchanges = new ArrayList<>();
        for (Step step : steps) {
            exchanges.add(send(app.uri(step.path()), step));
        }
        return exchanges;
    }

    static Exchange send(URI uri, Step step) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).GET();
        if (step.apiKey() != null) {
            request.header("X-API-Key", step.apiKey());
        }
        HttpResponse<String> response;
        try {
            response = CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        Map<String, String> headers = new TreeMap<>();
        for (String name : FILTER_HEADERS) {
            response.headers().firstValue(name).ifPresent(value -> headers.put(name, value));
        }
        // The servlet's own content type differs between containers (default charsets); the
        // filter's problem+json one must not.
        String contentType = response.statusCode() == 200 ? null : response.headers().firstValue("Content-Type")
                .orElse(null);
        return new Exchange(step.toString(), response.statusCode(), headers, contentType, response.body());
    }
}
