package dev.sluice.servlet;

import dev.sluice.testing.Ends;
import dev.sluice.testing.Gates;
import dev.sluice.testing.ResettingClient;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.util.List;
import java.util.UUID;

import static dev.sluice.servlet.Http.get;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Asynchronous requests that end otherwise than by a plain {@code complete()}, over real HTTP in
 * Jetty EE10 and EE11, on the memory store and on Redis: a second async cycle (started on the async
 * dispatch, on the request that dispatch got), a timeout, an error and a client that hangs up.
 * Each returns its concurrency lease and is charged ({@code charge=after}) by the status the client
 * received. (A second cycle was once seen keeping its lease for the whole {@code lease}, and
 * leaving a successful request charged: the container drops the first cycle's listeners.)
 */
class AsyncEndsTest {

    static List<Arguments> containersAndStores() {
        return ChargeAfterTest.containersAndStores();
    }

    /** A cap of one request in flight per caller, whose leases would outlive the test. */
    private static TestApp capped(String store) {
        return new TestApp().servlet(new UnhappyServlet())
                .instance("ends", new UnhappyServlet.EndsFilter(), "/*")
                .filter("cap", "/*", "algorithm", "concurrency", "limit", "1", "lease", "30s", "key", "header:X-Client",
                        "store", store, "timeout", "2s");
    }

    /** Two requests per caller, charged only for a client or server error. */
    private static TestApp charged(String store) {
        return new TestApp().servlet(new UnhappyServlet())
                .instance("ends", new UnhappyServlet.EndsFilter(), "/*")
                .filter("charged", "/*", "limit", "2/1h", "key", "header:X-Client", "charge", "after", "store", store,
                        "timeout", "2s");
    }

    /** Sends one request and waits until the server is done with it: its lease returned, its refund made. */
    private static int call(URI uri, String client) throws InterruptedException {
        int before = Ends.count(client);
        int status = get(uri, "X-Client", client).statusCode();
        if (status != 429) {
            Ends.await(client, before + 1);
        }
        return status;
    }

    private static void warmUp(TestApp.Running running, String client) throws InterruptedException {
        Http.awaitDecided("GET", running.uri("/none"), "X-Client", client + "-warm-up");
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void aSecondAsyncCycleReturnsItsLease(Container container, String store) throws Exception {
        String client = "twice-cap-" + UUID.randomUUID();
        try (var running = container.start(capped(store))) {
            for (int i = 0; i < 3; i++) {
                assertThat(call(running.uri("/twice/200"), client)).as("request %d, one at a time", i + 1)
                        .isEqualTo(200);
            }
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void aSecondAsyncCycleIsChargedByItsStatus(Container container, String store) throws Exception {
        String client = "twice-charged-" + UUID.randomUUID();
        try (var running = container.start(charged(store))) {
            warmUp(running, client);
            for (int i = 0; i < 4; i++) {
                assertThat(call(running.uri("/twice/200"), client)).as("success %d, refunded", i + 1).isEqualTo(200);
            }
            for (int i = 0; i < 2; i++) {
                assertThat(call(running.uri("/twice/401"), client)).as("failure %d, charged", i + 1).isEqualTo(401);
            }
            assertThat(call(running.uri("/twice/200"), client)).isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void timeoutsAndErrorsReturnTheirLeases(Container container, String store) throws Exception {
        String client = "ends-cap-" + UUID.randomUUID();
        try (var running = container.start(capped(store))) {
            assertThat(call(running.uri("/twice-timeout"), client)).as("a second cycle that timed out").isEqualTo(500);
            assertThat(call(running.uri("/twice-error"), client)).as("an async dispatch that threw").isEqualTo(500);
            try (ResettingClient committed = ResettingClient.send(running.uri("/timeout-committed/200"), "X-Client",
                    client)) {
                assertThat(committed.status()).isEqualTo(200);
                Ends.await(client, 3);
            }
            assertThat(call(running.uri("/none"), client)).as("every lease returned").isEqualTo(404);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void timeoutsAndErrorsAreChargedByTheStatusTheClientReceived(Container container, String store) throws Exception {
        String client = "ends-charged-" + UUID.randomUUID();
        try (var running = container.start(charged(store))) {
            warmUp(running, client);
            for (int i = 0; i < 3; i++) {
                // the 200 was on the wire before the timeout: the container can no longer answer 500
                try (ResettingClient committed = ResettingClient.send(running.uri("/timeout-committed/200"), "X-Client",
                        client)) {
                    assertThat(committed.status()).as("timed out after committing 200, %d", i + 1).isEqualTo(200);
                    Ends.await(client, i + 1);
                }
            }
            assertThat(call(running.uri("/twice-timeout"), client)).as("a timeout before commit").isEqualTo(500);
            assertThat(call(running.uri("/twice-error"), client)).as("an error before commit").isEqualTo(500);
            assertThat(call(running.uri("/twice/200"), client)).as("both charged").isEqualTo(429);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void aClientThatHangsUpDuringAnAsyncRequestReturnsItsLeaseAndIsCharged(Container container, String store)
            throws Exception {
        String client = "hang-up-" + UUID.randomUUID();
        try (var capped = container.start(capped(store)); var charged = container.start(charged(store))) {
            warmUp(charged, client);
            List<TestApp.Running> apps = List.of(capped, charged);
            for (int app = 0; app < 2; app++) {
                TestApp.Running running = apps.get(app);
                for (int i = 0; i < 2; i++) {
                    String gate = client + "-" + app + "-" + i;
                    int before = Ends.count(client);
                    try (ResettingClient hangingUp = ResettingClient.send(running.uri("/async-hold/401/" + gate),
                            "X-Client", client)) {
                        Gates.awaitEntered(gate);
                        hangingUp.reset();
                        Gates.open(gate);
                        Ends.await(client, before + 1);
                    }
                }
            }
            assertThat(call(capped.uri("/none"), client)).as("the leases came back").isEqualTo(404);
            // Gone before anything was sent: 401 (the application's status) or 500 (the container saw the
            // client go first); 4xx,5xx charges either.
            assertThat(call(charged.uri("/none"), client)).as("both hang-ups charged").isEqualTo(429);
        }
    }
}
