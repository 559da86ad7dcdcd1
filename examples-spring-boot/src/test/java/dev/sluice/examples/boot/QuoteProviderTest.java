package dev.sluice.examples.boot;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's RestClient to a provider with a quota, run: {@code /quotes/{symbol}} calls a
 * provider (the JDK's HTTP server on 127.0.0.1, started here, counting what arrives) through the
 * client of {@link QuoteProvider}, limited to 3 calls a minute, 3 at once. Whatever the load, the
 * provider never sees more calls than the limiter granted, nor than the limit allows; a call
 * without a permit is never sent, and the application answers it 503 with Retry-After.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"server.address=127.0.0.1", "sluice.store=memory", "quotes.limit=3/1m", "quotes.burst=3"})
class QuoteProviderTest {

    private static final int CALLS = 8;
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static final ConcurrentLinkedQueue<String> ARRIVED = new ConcurrentLinkedQueue<>();
    private static final ExecutorService PROVIDER_THREADS = Executors.newFixedThreadPool(4);
    private static HttpServer provider;

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry registry;

    /** The provider, started before the application, which reads its address from {@code quotes.url}. */
    @DynamicPropertySource
    static void provider(DynamicPropertyRegistry properties) throws IOException {
        provider = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        provider.createContext("/", exchange -> {
            ARRIVED.add(exchange.getRequestURI().getPath());
            byte[] body = ("quote of " + exchange.getRequestURI().getPath() + "\n").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        provider.setExecutor(PROVIDER_THREADS);
        provider.start();
        properties.add("quotes.url", () -> "http://127.0.0.1:" + provider.getAddress().getPort());
    }

    @AfterAll
    static void stopProvider() {
        provider.stop(0);
        PROVIDER_THREADS.shutdownNow();
    }

    /**
     * Eight calls at once: each is answered 200 with the provider's quote, or 503 with Retry-After
     * without reaching the provider. What arrives is exactly the 200s, at most what the limiter
     * granted, and at most what 3 a minute (3 at once) allows over the time the calls took.
     */
    @Test
    void theProviderNeverSeesMoreCallsThanTheLimitGrants() throws Exception {
        ExecutorService callers = Executors.newFixedThreadPool(CALLS);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<HttpResponse<String>>> calls = new ArrayList<>();
        long began = System.nanoTime();
        try {
            for (int i = 0; i < CALLS; i++) {
                calls.add(callers.submit(() -> {
                    start.await();
                    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/quotes/ACME"))
                            .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
                }));
            }
            start.countDown();
            int ok = 0;
            for (Future<HttpResponse<String>> call : calls) {
                HttpResponse<String> response = call.get(60, TimeUnit.SECONDS);
                if (response.statusCode() == 200) {
                    ok++;
                    assertThat(response.body()).isEqualTo("quote of /quote/ACME\n");
                } else {
                    assertThat(response.statusCode()).as("no permit: not sent, answered 503").isEqualTo(503);
                    assertThat(response.headers().firstValue("Retry-After")).get().satisfies(
                            seconds -> assertThat(Long.parseLong(seconds)).isBetween(1L, 60L));
                }
            }
            long elapsed = System.nanoTime() - began;
            double granted = registry.get("sluice.decisions").tag("policy", "quotes").tag("outcome", "allowed")
                    .counter().count();
            assertThat(ARRIVED).as("the calls that had a permit, and only they, arrived").hasSize(ok)
                    .allMatch("/quote/ACME"::equals);
            assertThat((double) ARRIVED.size()).as("arrived, at most granted").isLessThanOrEqualTo(granted);
            // a token bucket of 3 refilled at 3 a minute: 3, and one more per 20 s gone by
            long allowed = 3 + elapsed / TimeUnit.SECONDS.toNanos(20);
            assertThat((long) ARRIVED.size()).as("at most the burst and what 3/1m refilled in %d ms",
                    TimeUnit.NANOSECONDS.toMillis(elapsed)).isLessThanOrEqualTo(allowed);
            assertThat(ok).as("a provider with quota left is called").isPositive();
        } finally {
            callers.shutdownNow();
        }
    }
}
