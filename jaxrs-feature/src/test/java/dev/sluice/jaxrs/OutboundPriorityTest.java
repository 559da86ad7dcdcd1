package dev.sluice.jaxrs;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.Priority;
import dev.sluice.outbound.RateLimitedHttpClient;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.core.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Both clients carry a call's priority to {@link Permits}, over real HTTP on loopback: the JAX-RS
 * filter from a request property, the {@code HttpClient} decorator from a function of the request.
 * The shared limit is 2 per second, burst 2, half kept for high priority: the low-priority lane
 * is 1 per second, burst 1. Two low-priority calls in a row are a lane slot apart, so they take
 * a second at least, where without the lane the shared burst would let both go at once; a
 * high-priority call right after goes at once (the shared bucket holds a permit again), where a
 * low one would wait for the next lane slot. The clients are warmed up first, unlimited, so a
 * cold start is not taken for a wait.
 */
class OutboundPriorityTest {

    private static final Limit SHARED = Limit.of("provider", 2, Duration.ofSeconds(1)).withBurst(2);
    private static final long LANE_SLOT = TimeUnit.MILLISECONDS.toNanos(950);
    private static final long AT_ONCE = TimeUnit.MILLISECONDS.toNanos(700);

    private HttpServer provider;
    private Client jaxrs;

    @BeforeEach
    void start() throws Exception {
        provider = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 10);
        provider.createContext("/", exchange -> {
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        provider.start();
    }

    @AfterEach
    void stop() {
        if (jaxrs != null) {
            jaxrs.close();
        }
        provider.stop(0);
    }

    private URI uri() {
        return URI.create("http://127.0.0.1:" + provider.getAddress().getPort() + "/call");
    }

    private static Permits permits() {
        return Permits.builder(RateLimiter.builder().limit(SHARED).store(MemoryStore.create()).build())
                .maxWait(Duration.ofSeconds(5)).highPriorityShare(0.5).build();
    }

    private static long timed(Runnable call) {
        long started = System.nanoTime();
        call.run();
        return System.nanoTime() - started;
    }

    @Test
    void theJaxRsFilterReadsTheRequestsPriorityProperty() {
        jaxrs = ClientBuilder.newClient().register(RateLimitClientFilter.named(permits(), "provider"));
        Runnable low = () ->
                status(jaxrs.target(uri()).request().property(RateLimitClientFilter.PRIORITY, Priority.LOW).get());
        Runnable high = () -> status(jaxrs.target(uri()).request().get());
        try (Client plain = ClientBuilder.newClient()) {
            status(plain.target(uri()).request().get());
        }
        assertThat(timed(() -> {
            low.run();
            low.run();
        })).as("two low-priority calls are a lane slot apart").isGreaterThanOrEqualTo(LANE_SLOT);
        assertThat(timed(high)).as("a high-priority call right after goes at once").isLessThan(AT_ONCE);
        assertThatThrownBy(() -> jaxrs.target(uri()).request().property(RateLimitClientFilter.PRIORITY, "low").get())
                .isInstanceOf(ProcessingException.class)
                .hasMessageContaining(
                        "request property 'dev.sluice.outbound.Priority' must be a dev.sluice.outbound.Priority, got "
                        + "'low'");
    }

    @Test
    void theHttpClientDecoratorAsksItsPriorityFunction() throws Exception {
        HttpClient client = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), permits(), "provider")
                .withPriority(request -> request.headers().firstValue("X-Batch").isPresent() ? Priority.LOW
                        : Priority.HIGH);
        HttpRequest batch = HttpRequest.newBuilder(uri()).header("X-Batch", "nightly").build();
        HttpRequest interactive = HttpRequest.newBuilder(uri()).build();
        HttpClient.newHttpClient().send(interactive, HttpResponse.BodyHandlers.discarding());
        long started = System.nanoTime();
        client.send(batch, HttpResponse.BodyHandlers.discarding());
        assertThat(client.sendAsync(batch, HttpResponse.BodyHandlers.discarding()).get(5, TimeUnit.SECONDS)
                .statusCode())
                .isEqualTo(200);
        assertThat(System.nanoTime() - started).as("two low-priority calls are a lane slot apart")
                .isGreaterThanOrEqualTo(LANE_SLOT);
        started = System.nanoTime();
        client.send(interactive, HttpResponse.BodyHandlers.discarding());
        assertThat(System.nanoTime() - started).as("a high-priority call right after goes at once").isLessThan(AT_ONCE);

        Permits plain = Permits.of(RateLimiter.builder().limit(SHARED).build(), Duration.ofSeconds(1));
        assertThatThrownBy(() -> RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), plain, "provider")
                .withPriority(request -> Priority.LOW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("highPriorityShare");
    }

    private static void status(Response response) {
        try (response) {
            assertThat(response.getStatus()).isEqualTo(200);
        }
    }
}
