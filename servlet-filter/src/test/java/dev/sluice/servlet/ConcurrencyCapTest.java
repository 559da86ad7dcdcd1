package dev.sluice.servlet;

import dev.sluice.testing.Gates;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code algorithm=concurrency} over real HTTP in Jetty, on the memory store and on Redis: at most
 * {@code limit} requests of a caller in flight, a lease held until the (possibly asynchronous)
 * response completes, and one cap shared by three instances through Redis.
 */
class ConcurrencyCapTest {

    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    static Iterable<?> containersAndStores() {
        return ChargeAfterTest.containersAndStores();
    }

    static Iterable<Container> containers() {
        return Container.selected();
    }

    /** Starts a slow request through gate {@code gate} and waits until it is in the application. */
    private static CompletableFuture<HttpResponse<String>> inFlight(URI uri, String client, String gate)
            throws InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).header("X-Client", client)
                .GET()
                .build();
        CompletableFuture<HttpResponse<String>> response = CLIENT.sendAsync(request,
                HttpResponse.BodyHandlers.ofString());
        Gates.awaitEntered(gate);
        return response;
    }

    private static int status(CompletableFuture<HttpResponse<String>> response) throws Exception {
        return response.get(20, TimeUnit.SECONDS).statusCode();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void fiveInFlightRefuseTheSixthAndACompletedOneAdmitsTheNext(Container container, String store) throws Exception {
        TestApp app = new TestApp().servlet(new AfterResponseServlet())
                .filter("cap", "/*", "algorithm", "concurrency", "limit", "5", "key", "header:X-Client", "store", store,
                        "timeout", "2s");
        String client = "cap-" + UUID.randomUUID();
        try (var running = container.start(app)) {
            List<String> gates = new ArrayList<>();
            List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                String gate = client + "-" + i;
                gates.add(gate);
                // the last one is asynchronous: its dispatch returns at once, its response completes later
                slow.add(inFlight(running.uri((i == 4 ? "/async-hold/" : "/hold/") + gate), client, gate));
            }
            HttpResponse<String> sixth = get(running.uri("/x"), "X-Client", client);
            assertThat(sixth.statusCode()).as("the sixth in flight").isEqualTo(429);
            assertThat(header(sixth, "Retry-After")).isEqualTo("1");
            assertThat(header(sixth, "RateLimit-Limit")).as("a concurrency limit publishes no quota headers").isNull();
            assertThat(Http.json(sixth)).containsEntry("status", 429L).containsEntry("policy", "cap");
            assertThat(get(running.uri("/x"), "X-Client", client + "-other").statusCode()).as("another caller")
                    .isEqualTo(200);

            Gates.open(gates.get(4));
            assertThat(status(slow.get(4))).isEqualTo(200);
            assertThat(get(running.uri("/x"), "X-Client", client).statusCode())
                    .as("the asynchronous request returned its lease when its response completed").isEqualTo(200);
            String again = client + "-5";
            CompletableFuture<HttpResponse<String>> refill = inFlight(running.uri("/hold/" + again), client, again);
            assertThat(get(running.uri("/x"), "X-Client", client).statusCode()).as("five in flight again")
                    .isEqualTo(429);

            Gates.open(gates.get(0));
            assertThat(status(slow.get(0))).isEqualTo(200);
            assertThat(get(running.uri("/x"), "X-Client", client).statusCode()).isEqualTo(200);
            for (int i = 1; i < 4; i++) {
                Gates.open(gates.get(i));
                assertThat(status(slow.get(i))).isEqualTo(200);
            }
            Gates.open(again);
            assertThat(status(refill)).isEqualTo(200);
            assertThat(get(running.uri("/throw"), "X-Client", client).statusCode()).isEqualTo(500);
            for (int i = 0; i < 5; i++) {
                assertThat(get(running.uri("/x"), "X-Client", client).statusCode())
                        .as("every lease returned, the failed request's too").isEqualTo(200);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void threeInstancesShareOneCapThroughRedisExactly(Container container) throws Exception {
        String[] params = {"policy", "shared-cap", "algorithm", "concurrency", "limit", "3", "key", "header:X-Client",
            "store", TestRedis.shared().url(), "timeout", "2s"};
        String client = "shared-cap-" + UUID.randomUUID();
        try (var one = container.start(new TestApp().servlet(new AfterResponseServlet()).filter("cap-1", "/*", params));
             var two = container.start(new TestApp().servlet(new AfterResponseServlet()).filter("cap-2", "/*", params));
             var three =
                     container.start(new TestApp().servlet(new AfterResponseServlet()).filter("cap-3", "/*", params))) {
            List<TestApp.Running> nodes = List.of(one, two, three);
            List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                slow.add(inFlight(nodes.get(i).uri("/hold/" + client + "-" + i), client, client + "-" + i));
            }
            for (TestApp.Running node : nodes) {
                assertThat(get(node.uri("/x"), "X-Client", client).statusCode()).as("a fourth in flight")
                        .isEqualTo(429);
            }
            Gates.open(client + "-1");
            assertThat(status(slow.get(1))).isEqualTo(200);
            assertThat(get(three.uri("/x"), "X-Client", client).statusCode()).as("the place node two returned")
                    .isEqualTo(200);
            CompletableFuture<HttpResponse<String>> fourth = inFlight(three.uri("/hold/" + client + "-3"), client,
                    client + "-3");
            for (TestApp.Running node : nodes) {
                assertThat(get(node.uri("/x"), "X-Client", client).statusCode()).isEqualTo(429);
            }
            for (int i : new int[] {0, 2}) {
                Gates.open(client + "-" + i);
                assertThat(status(slow.get(i))).isEqualTo(200);
            }
            Gates.open(client + "-3");
            assertThat(status(fourth)).isEqualTo(200);
        }
    }
}
