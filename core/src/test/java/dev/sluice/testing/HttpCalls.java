package dev.sluice.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Real HTTP/1.1 calls over loopback for the adapters' tests, as curl makes them. */
public final class HttpCalls {

    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private HttpCalls() {
    }

    /** Sends {@code method uri} with an empty body and request headers given as {@code name, value, ...}. */
    public static HttpResponse<String> send(String method, URI uri, String... headers) {
        return sendForm(method, uri, null, headers);
    }

    /**
     * Sends {@code method uri} with {@code form} as an {@code application/x-www-form-urlencoded}
     * body (none when {@code null}) and request headers given as {@code name, value, ...}.
     */
    public static HttpResponse<String> sendForm(String method, URI uri, String form, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                .method(method,
                        form == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(form));
        if (form != null) {
            request.header("Content-Type", "application/x-www-form-urlencoded");
        }
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
    public static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
    }
}
