package dev.sluice.jaxrs;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.RateLimitedHttpClient;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.TestRedis;
import jakarta.ws.rs.client.Client;
import jakarta.ws.rs.client.ClientBuilder;
import jakarta.ws.rs.core.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three application instances (each its own Redisson client, four threads each) call a provider
 * that takes 100 ms per request, through the {@code HttpClient} decorator, and through the JAX-RS
 * client filter (Jersey), with {@code maxInFlight(2)}: the provider never sees more than two requests at once, every
 * call completes, and the cap is used (two at once is reached). The rate limit is generous so the
 * cap alone shapes the traffic.
 */
class OutboundInFlightTest {

    private static final int CALLS_PER_THREAD = 5;

    private TestRedis redis;
    private HttpServer server;
    private final List<RedissonClient> clients = new ArrayList<>();
    private final List<Client> jaxrs = new ArrayList<>();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicInteger served = new AtomicInteger();

    @BeforeEach
    void start() throws Exception {
        redis = TestRedis.start();
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 50);
        server.createContext("/", exchange -> {
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                // counted out before the answer: the client may start its next call as soon as it has it
                inFlight.decrementAndGet();
                served.incrementAndGet();
            }
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.setExecutor(Executors.newFixedThreadPool(16));
        server.start();
    }

    @AfterEach
    void stop() {
        jaxrs.forEach(Client::close);
        clients.forEach(RedissonClient::shutdown);
        server.stop(0);
        ((ExecutorService) server.getExecutor()).shutdownNow();
        redis.stop();
    }

    private Permits instance() {
        RedissonClient client = redis.newClient();
        clients.add(client);
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 1000, Duration.ofSeconds(1)))
                .store(RedisStore.of(client)).timeout(Duration.ofSeconds(2)).build();
        return Permits.builder(limiter).maxWait(Duration.ofSeconds(30)).maxInFlight(2).build();
    }

    /** One call of an instance's thread; {@code async} for the first thread of each instance. */
    private interface Call {
        int status(URI uri, boolean async) throws Exception;
    }

    private Call httpClient() {
        HttpClient client = RateLimitedHttpClient.wrap(HttpClient.newHttpClient(), instance(), "provider");
        return (uri, async) -> {
            HttpRequest request = HttpRequest.newBuilder(uri).build();
            return async
                    ? client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).get(60, TimeUnit.SECONDS)
                    .statusCode()
                    : client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        };
    }

    private Call jaxrsClient() {
        Client client = ClientBuilder.newClient().register(RateLimitClientFilter.named(instance(), "provider"));
        jaxrs.add(client);
        return (uri, async) -> {
            try (Response response = async
                    ? client.target(uri).request().async().get().get(60, TimeUnit.SECONDS)
                    : client.target(uri).request().get()) {
                return response.getStatus();
            }
        };
    }

    @Test
    void threeInstancesNeverHaveMoreThanTwoCallsInFlightAtTheProvider() throws Exception {
        threeInstancesCall(this::httpClient);
    }

    @Test
    void threeInstancesNeverHaveMoreThanTwoCallsInFlightThroughTheJaxRsFilter() throws Exception {
        threeInstancesCall(this::jaxrsClient);
    }

    private void threeInstancesCall(java.util.function.Supplier<Call> instances) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/call");
        AtomicInteger completed = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Call client = instances.get();
            for (int t = 0; t < 4; t++) {
                boolean async = t == 0;
                threads.add(new Thread(() -> {
                    for (int c = 0; c < CALLS_PER_THREAD; c++) {
                        try {
                            int status = client.status(uri, async);
                            if (status == 200) {
                                completed.incrementAndGet();
                            } else {
                                failed.incrementAndGet();
                            }
                        } catch (Exception e) {
                            failed.incrementAndGet();
                        }
                    }
                }));
            }
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join(90_000);
        }

        int calls = 3 * 4 * CALLS_PER_THREAD;
        assertThat(failed.get()).as("calls that failed").isZero();
        assertThat(completed.get()).as("calls completed").isEqualTo(calls);
        assertThat(served.get()).as("calls the provider served").isEqualTo(calls);
        assertThat(maxInFlight.get()).as("most calls in flight at the provider at once").isEqualTo(2);
    }
}
