package dev.sluice.jaxrs;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.outbound.PermitUnavailableException;
import dev.sluice.outbound.Permits;
import dev.sluice.outbound.RateLimitedHttpClient;
import dev.sluice.redis.RedisStore;
import dev.sluice.testing.TestRedis;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two application instances (each its own Redisson client and limiter) share a provider's quota of
 * one call per second, burst 1, and one place in flight, on one Redis. A call of the second
 * instance given up while it waits for its slot ({@code orTimeout}, {@code completeOnTimeout},
 * completed by the caller, normally or not, or cancelled) is never sent, and gives back its place:
 * the first instance's next call gets it, and is the only other call the provider sees. Its slot
 * comes a second after the first call's, long after it is given up (30 ms), so a call still
 * waiting would arrive before the next one.
 */
class OutboundGiveUpTest {

    private static final Map<String, Consumer<CompletableFuture<HttpResponse<Void>>>> GIVING_UP = new LinkedHashMap<>();

    static {
        GIVING_UP.put("orTimeout", stage -> stage.orTimeout(30, TimeUnit.MILLISECONDS));
        GIVING_UP.put("completeOnTimeout", stage -> stage.completeOnTimeout(null, 30, TimeUnit.MILLISECONDS));
        GIVING_UP.put("complete", stage -> stage.complete(null));
        GIVING_UP.put("completeExceptionally",
                stage -> stage.completeExceptionally(new IllegalStateException("gave up")));
        GIVING_UP.put("cancel", stage -> stage.cancel(false));
    }

    private TestRedis redis;
    private HttpServer server;
    private final List<RedissonClient> clients = new ArrayList<>();
    /** Each request's path, in the order they arrived. */
    private final ConcurrentLinkedQueue<String> arrived = new ConcurrentLinkedQueue<>();

    @BeforeEach
    void start() throws Exception {
        redis = TestRedis.start();
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 50);
        server.createContext("/", exchange -> {
            arrived.add(exchange.getRequestURI().getPath());
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
    }

    @AfterEach
    void stop() {
        clients.forEach(RedissonClient::shutdown);
        server.stop(0);
        ((ExecutorService) server.getExecutor()).shutdownNow();
        redis.stop();
    }

    private Permits instance(Duration maxWait) {
        RedissonClient client = redis.newClient();
        clients.add(client);
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 1, Duration.ofSeconds(1)).withBurst(1))
                .store(RedisStore.of(client)).timeout(Duration.ofSeconds(2)).build();
        return Permits.builder(limiter).maxWait(maxWait).maxInFlight(1).build();
    }

    private HttpRequest request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path))
                .timeout(Duration.ofSeconds(10)).build();
    }

    @Test
    void aCallGivenUpBeforeItsSlotIsNeverSentAndItsPlaceIsFreed() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        Permits first = instance(Duration.ofSeconds(5));
        Permits second = instance(Duration.ofSeconds(5));
        // a place a second instance's call still held could not be had within this wait
        Permits probe = instance(Duration.ofMillis(500));
        for (var way : GIVING_UP.entrySet()) {
            String key = way.getKey();
            HttpClient one = RateLimitedHttpClient.wrap(http, first, key);
            HttpClient two = RateLimitedHttpClient.wrap(http, second, key);
            assertThat(one.send(request("/" + key + "/1"), HttpResponse.BodyHandlers.discarding()).statusCode())
                    .isEqualTo(200);
            CompletableFuture<HttpResponse<Void>> givenUp = two.sendAsync(request("/" + key + "/2"),
                    HttpResponse.BodyHandlers.discarding());
            way.getValue().accept(givenUp);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!givenUp.isDone() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(givenUp).as("%s: given up", key).isDone();
            awaitPlaceFree(probe, key);
            assertThat(one.sendAsync(request("/" + key + "/3"), HttpResponse.BodyHandlers.discarding())
                    .get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
            assertThat(arrived.stream().filter(path -> path.startsWith("/" + key + "/")).toList())
                    .as("%s: the call given up was not sent", key).containsExactly("/" + key + "/1", "/" + key + "/3");
        }
    }

    /** Waits (bounded) until a place of {@code key} is free; the give-back may still be on its way to Redis. */
    private static void awaitPlaceFree(Permits probe, String key) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                probe.enter(key).release();
                return;
            } catch (PermitUnavailableException e) {
                assertThat(System.nanoTime()).as("%s: the place is still held by the call given up", key)
                        .isLessThan(deadline);
            }
        }
    }
}
