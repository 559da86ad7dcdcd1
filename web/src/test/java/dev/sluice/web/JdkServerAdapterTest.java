package dev.sluice.web;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The public seam is enough for a whole adapter: {@link JdkServerAdapter}, on the JDK's HTTP
 * server, answers over real HTTP as the servlet filter does.
 */
class JdkServerAdapterTest {

    private final HttpClient client = HttpClient.newHttpClient();
    private final List<HttpLimiter> limiters = new ArrayList<>();
    private HttpServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
        limiters.forEach(HttpLimiter::close);
    }

    /** Serves {@code path} answering {@code status}, limited by {@code parameters}. */
    private void serve(String path, int status, Map<String, String> parameters) throws IOException {
        if (server == null) {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.start();
        }
        HttpLimiter limiter = HttpLimiter.builder("route '" + path + "'").name(path.substring(1))
                .parameters(parameters::get).build();
        limiters.add(limiter);
        server.createContext(path, new JdkServerAdapter(limiter, exchange -> {
            byte[] body = "hello".getBytes();
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
        }));
    }

    private HttpResponse<String> get(String path) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path);
        return client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void allowsWithHeadersThenRefusesWithRetryAfterAndAProblem() throws Exception {
        serve("/api", 200, Map.of("limit", "2/1m", "headers", "legacy"));

        HttpResponse<String> first = get("/api");
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("hello");
        assertThat(first.headers().firstValue("RateLimit-Limit")).hasValue("2");
        assertThat(first.headers().firstValue("RateLimit-Remaining")).hasValue("1");
        assertThat(get("/api").headers().firstValue("RateLimit-Remaining")).hasValue("0");

        HttpResponse<String> refused = get("/api");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After").map(Long::parseLong)).hasValueSatisfying(
                seconds -> assertThat(seconds).isBetween(1L, 60L));
        assertThat(refused.headers().firstValue("RateLimit-Remaining")).hasValue("0");
        assertThat(refused.headers().firstValue("Content-Type")).hasValue(Answer.PROBLEM_JSON);
        assertThat(refused.body()).contains("\"status\":429").contains("\"title\":\"Too Many Requests\"");
    }

    @Test
    void chargesAfterTheResponseOnlyTheStatusesCharged() throws Exception {
        Map<String, String> oneFailure = Map.of("limit", "1/1m", "charge", "after", "charge-when", "5xx");
        serve("/fine", 200, oneFailure);
        serve("/broken", 503, oneFailure);

        for (int i = 0; i < 3; i++) {
            assertThat(get("/fine").statusCode()).as("request %d of a route whose 200s are refunded", i)
                    .isEqualTo(200);
        }
        assertThat(get("/broken").statusCode()).as("the one failure the budget allows").isEqualTo(503);
        assertThat(get("/broken").statusCode()).as("charged: the budget is spent").isEqualTo(429);
    }
}
