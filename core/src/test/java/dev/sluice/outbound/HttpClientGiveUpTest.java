package dev.sluice.outbound;

import com.sun.net.httpserver.HttpServer;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.memory.MemoryStore;
import dev.sluice.testing.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RateLimitedHttpClient#sendAsync}: a returned stage completed before the request is handed
 * to the {@code HttpClient}, however (cancelled, {@code orTimeout}, {@code completeOnTimeout}, the
 * caller completing it, normally or not), never sends the request, and gives back its reservation
 * and its place in flight. Real HTTP to a server on loopback that records what arrives.
 */
class HttpClientGiveUpTest {

    /** How a caller gives up on a waiting call, by name. */
    private static final Map<String, Consumer<CompletableFuture<HttpResponse<String>>>> GIVING_UP =
            new LinkedHashMap<>();

    static {
        GIVING_UP.put("orTimeout", stage -> stage.orTimeout(30, TimeUnit.MILLISECONDS));
        GIVING_UP.put("completeOnTimeout", stage -> stage.completeOnTimeout(null, 30, TimeUnit.MILLISECONDS));
        GIVING_UP.put("complete", stage -> stage.complete(null));
        GIVING_UP.put("completeExceptionally",
                stage -> stage.completeExceptionally(new IllegalStateException("gave up")));
        GIVING_UP.put("cancel", stage -> stage.cancel(false));
    }

    private HttpServer server;
    /** Each request's path, in the order they arrived. */
    private final ConcurrentLinkedQueue<String> arrived = new ConcurrentLinkedQueue<>();
    /** Holds requests to a path ending in {@code /slow} until opened. */
    private final CountDownLatch slow = new CountDownLatch(1);
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final List<CompletableFuture<?>> stages = new ArrayList<>();

    @BeforeEach
    void startTheProvider() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            arrived.add(path);
            try {
                if (path.endsWith("/slow") && !slow.await(20, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the slow request was never let through");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
        server.start();
    }

    @AfterEach
    void stop() {
        slow.countDown();
        stages.forEach(stage -> stage.cancel(false));
        server.stop(0);
    }

    private HttpRequest request(String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + path))
                .timeout(Duration.ofSeconds(10)).build();
    }

    private CompletableFuture<HttpResponse<String>> sendAsync(HttpClient client, String path) {
        CompletableFuture<HttpResponse<String>> stage = client.sendAsync(request(path),
                HttpResponse.BodyHandlers.ofString());
        stages.add(stage);
        return stage;
    }

    /** What arrived under {@code prefix}, in order. */
    private List<String> arrivedUnder(String prefix) {
        return arrived.stream().filter(path -> path.startsWith(prefix)).toList();
    }

    /** Waits (bounded) until {@code stage} is done, however. */
    private static void awaitDone(CompletableFuture<?> stage) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!stage.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(stage).as("given up").isDone();
    }

    /**
     * One call per second, burst 1, on a real clock: the first call goes at once, the second's slot
     * comes a second later (long after it is given up, even on a busy machine). The second is given up first; the
     * third, asked after, must be the only other call to arrive: had the second gone at its slot, it would arrive
     * before the third.
     */
    @Test
    void aCallGivenUpWhileWaitingForItsSlotIsNeverSent() throws Exception {
        for (boolean capped : new boolean[] {false, true}) {
            for (var way : GIVING_UP.entrySet()) {
                String prefix = "/" + way.getKey() + (capped ? "-capped" : "");
                RateLimiter limiter = RateLimiter.builder()
                        .limit(Limit.of("provider", 1, Duration.ofSeconds(1)).withBurst(1))
                        .build();
                Permits.Builder builder = Permits.builder(limiter).maxWait(Duration.ofSeconds(5));
                Permits permits = (capped ? builder.maxInFlight(1) : builder).build();
                HttpClient client = RateLimitedHttpClient.wrap(http, permits, prefix);
                assertThat(client.send(request(prefix + "/1"), HttpResponse.BodyHandlers.ofString()).statusCode())
                        .isEqualTo(200);
                CompletableFuture<HttpResponse<String>> second = sendAsync(client, prefix + "/2");
                way.getValue().accept(second);
                awaitDone(second);
                assertThat(sendAsync(client, prefix + "/3").get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
                assertThat(arrivedUnder(prefix + "/")).as("%s: the call given up was not sent", prefix)
                        .containsExactly(prefix + "/1", prefix + "/3");
                if (capped) {
                    awaitPlaceFree(permits, prefix);
                }
            }
        }
    }

    /**
     * One place in flight: the first call holds it (its provider answers only when the test lets
     * it); the others, waiting for the place at most a second, are given up. Once the first is
     * answered, the place stays free past their wait (one still asking would take it and send by
     * then), the last call gets it, and none of the calls given up arrives.
     */
    @Test
    void aCallGivenUpWhileWaitingForAPlaceIsNeverSent() throws Exception {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("provider", 1000, Duration.ofSeconds(1))).build();
        Permits permits = Permits.builder(limiter).maxWait(Duration.ofSeconds(1)).maxInFlight(1).build();
        HttpClient client = RateLimitedHttpClient.wrap(http, permits, "provider");
        CompletableFuture<HttpResponse<String>> first = sendAsync(client, "/place/first/slow");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!arrived.contains("/place/first/slow") && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(arrived).as("the first call, holding the place").contains("/place/first/slow");
        long started = System.nanoTime();
        List<CompletableFuture<HttpResponse<String>>> givenUp = new ArrayList<>();
        for (var way : GIVING_UP.entrySet()) {
            CompletableFuture<HttpResponse<String>> waiting = sendAsync(client, "/place/" + way.getKey());
            givenUp.add(waiting);
            way.getValue().accept(waiting);
        }
        for (CompletableFuture<HttpResponse<String>> waiting : givenUp) {
            awaitDone(waiting);
        }
        slow.countDown();
        assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        while (System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(1_300)) {
            Thread.sleep(20);
        }
        awaitPlaceFree(permits, "provider");
        assertThat(sendAsync(client, "/place/last").get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        awaitPlaceFree(permits, "provider");
        assertThat(arrivedUnder("/place/")).as("only the calls not given up were sent")
                .containsExactly("/place/first/slow", "/place/last");
    }

    /**
     * One call per 100 s on a manual clock (the second call's slot never comes): given up, its
     * reservation is given back (the next caller gets its slot, at 100 s, not 200 s) and its place
     * in flight is free at once, not when a slot it will never use comes.
     */
    @Test
    void aCallGivenUpGivesBackItsReservationAndItsPlace() throws Exception {
        Limit slowest = Limit.of("provider", 10, Duration.ofSeconds(1000)).withBurst(1);
        for (var way : GIVING_UP.entrySet()) {
            MemoryStore store = MemoryStore.builder().timeSource(new ManualClock()).build();
            RateLimiter limiter = RateLimiter.builder().limit(slowest).store(store).timeout(Duration.ofSeconds(5))
                    .build();
            Permits permits = Permits.builder(limiter).maxWait(Duration.ofSeconds(1000)).maxInFlight(1).build();
            String key = "reserved-" + way.getKey();
            HttpClient client = RateLimitedHttpClient.wrap(http, permits, key);
            assertThat(client.send(request("/" + key + "/1"), HttpResponse.BodyHandlers.ofString()).statusCode())
                    .isEqualTo(200);
            CompletableFuture<HttpResponse<String>> second = sendAsync(client, "/" + key + "/2");
            awaitReserved(store, slowest, key);
            way.getValue().accept(second);
            awaitDone(second);
            awaitPlaceFree(permits, way.getKey());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!nextSlot(store, slowest, key).equals(Duration.ofSeconds(100)) && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertThat(nextSlot(store, slowest, key))
                    .as("%s: the reservation given back is the next caller's", way.getKey())
                    .isEqualTo(Duration.ofSeconds(100));
            assertThat(arrivedUnder("/" + key + "/")).containsExactly("/" + key + "/1");
        }
    }

    /** Waits (bounded) until the second call's reservation is booked: the next slot is 200 s away. */
    private static void awaitReserved(MemoryStore store, Limit limit, String key) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!nextSlot(store, limit, key).equals(Duration.ofSeconds(200)) && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(nextSlot(store, limit, key)).as("the second call's reservation, booked")
                .isEqualTo(Duration.ofSeconds(200));
    }

    /** The wait the next reservation would get, asked without booking anything. */
    private static Duration nextSlot(MemoryStore store, Limit limit, String key) {
        Decision probe = store.reserve(key, List.of(limit), Duration.ZERO).toCompletableFuture().join();
        return probe.retryAfter();
    }

    /** Polls (bounded) until a place of {@code key} under {@code permits}' cap is free. */
    private static void awaitPlaceFree(Permits permits, String key) throws InterruptedException {
        Permits probe = Permits.builder(permits.limiter()).maxWait(Duration.ZERO).maxInFlight(1).build();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                probe.enter(key).release();
                return;
            } catch (PermitUnavailableException e) {
                assertThat(System.nanoTime()).as("%s: the place is still held", key).isLessThan(deadline);
                Thread.sleep(5);
            }
        }
    }
}
