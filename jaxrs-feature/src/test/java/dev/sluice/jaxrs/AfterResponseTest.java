package dev.sluice.jaxrs;

import dev.sluice.testing.Gates;
import dev.sluice.testing.ResettingClient;
import dev.sluice.testing.TestRedis;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RateLimit(charge = "after")} and {@code algorithm = CONCURRENCY} in Jersey on Jetty,
 * over real HTTP, on the memory store and on Redis.
 */
class AfterResponseTest {

    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private static JerseyApp start(String store) throws Exception {
        String stored = store.equals("redis") ? TestRedis.shared().url() : "memory";
        return JerseyApp.start(new ResourceConfig(AfterResponseResources.Charged.class,
                AfterResponseResources.Capped.class)
                .register(AfterResponseResources.MappedFailureMapper.class)
                .register(RateLimitFeature.class)
                .property("sluice.store", stored)
                .property("sluice.timeout", "2s"));
    }

    private static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void theLoginRecipeCountsWrongPasswordsOnly(String store) throws Exception {
        String client = "jaxrs-login-" + UUID.randomUUID();
        try (JerseyApp app = start(store)) {
            for (int i = 0; i < 20; i++) {
                HttpResponse<String> right = app.get("/after/login/right", "X-Client", client);
                assertThat(right.statusCode()).as("correct login %d", i + 1).isEqualTo(200);
                assertThat(header(right, "RateLimit-Remaining")).isEqualTo("4");
            }
            for (int i = 0; i < 5; i++) {
                assertThat(app.get("/after/login/wrong", "X-Client", client).statusCode()).isEqualTo(401);
            }
            for (String attempt : List.of("/after/login/wrong", "/after/login/right")) {
                HttpResponse<String> refused = app.get(attempt, "X-Client", client);
                assertThat(refused.statusCode()).as("the sixth attempt, " + attempt).isEqualTo(429);
                assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 3600L);
            }
        }
    }

    /**
     * The login recipe against a client that reads the status line of each 401 and resets the
     * connection while the page is still being written: charged, because the response filter
     * settles the request with its status before the entity is written (the write that fails
     * comes later and changes nothing). The servlet filter once refunded these as 500s.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void aClientThatResetsAfterTheStatusLineOfA401IsChargedForIt(String store) throws Exception {
        try (JerseyApp app = start(store)) {
            for (String page : List.of("/after/login-page/", "/after/async-login-page/")) {
                String client = "jaxrs-reset-" + UUID.randomUUID();
                for (int i = 0; i < 5; i++) {
                    assertThat(ResettingClient.statusThenReset(app.uri(page + "wrong"), "X-Client", client))
                            .as("%swrong %d", page, i + 1).isEqualTo(401);
                }
                assertThat(ResettingClient.statusThenReset(app.uri(page + "wrong"), "X-Client", client))
                        .as("the sixth attempt after five 401s, each reset after its status line").isEqualTo(429);
                assertThat(ResettingClient.statusThenReset(app.uri(page + "right"), "X-Client", client))
                        .as("the right password too").isEqualTo(429);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void asynchronousFailuresAndExceptionsAreChargedAsFiveHundreds(String store) throws Exception {
        String client = "jaxrs-failures-" + UUID.randomUUID();
        try (JerseyApp app = start(store)) {
            for (int i = 0; i < 6; i++) {
                assertThat(app.get("/after/async/ok", "X-Client", client).statusCode()).isEqualTo(200);
            }
            assertThat(app.get("/after/async/503", "X-Client", client).statusCode()).isEqualTo(503);
            assertThat(app.get("/after/async/mapped", "X-Client", client).statusCode()).isEqualTo(500);
            assertThat(app.get("/after/throw/mapped", "X-Client", client).statusCode()).isEqualTo(500);
            assertThat(app.get("/after/async/ok", "X-Client", client).statusCode())
                    .as("an async 503, an async mapped exception and a mapped exception were charged").isEqualTo(429);

            String unmapped = client + "-unmapped";
            for (int i = 0; i < 3; i++) {
                assertThat(app.get("/after/throw/unmapped", "X-Client", unmapped).statusCode()).isEqualTo(500);
            }
            assertThat(app.get("/after/async/ok", "X-Client", unmapped).statusCode())
                    .as("an unmapped exception counts as 500 (it stays charged)").isEqualTo(429);
        }
    }

    private static CompletableFuture<HttpResponse<String>> inFlight(JerseyApp app, String path, String client,
                                                                    String gate) throws InterruptedException {
        CompletableFuture<HttpResponse<String>> response = CLIENT.sendAsync(HttpRequest.newBuilder(app.uri(path))
                .timeout(Duration.ofSeconds(30)).header("X-Client", client).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        Gates.awaitEntered(gate);
        return response;
    }

    private static int status(CompletableFuture<HttpResponse<String>> response) throws Exception {
        return response.get(20, TimeUnit.SECONDS).statusCode();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void fiveInFlightRefuseTheSixthUntilOneCompletesAsynchronousOnesIncluded(String store) throws Exception {
        String client = "jaxrs-cap-" + UUID.randomUUID();
        try (JerseyApp app = start(store)) {
            List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                String gate = client + "-" + i;
                slow.add(inFlight(app, (i == 4 ? "/cap/async-hold/" : "/cap/hold/") + gate, client, gate));
            }
            HttpResponse<String> sixth = app.get("/cap/quick/x", "X-Client", client);
            assertThat(sixth.statusCode()).isEqualTo(429);
            assertThat(header(sixth, "Retry-After")).isEqualTo("1");
            assertThat(header(sixth, "RateLimit-Limit")).isNull();
            assertThat(sixth.body()).contains("Too many requests in flight for policy 'jaxrs-cap'");

            Gates.open(client + "-4");
            assertThat(status(slow.get(4))).isEqualTo(200);
            assertThat(app.get("/cap/quick/x", "X-Client", client).statusCode())
                    .as("the asynchronous resource returned its lease when it resumed").isEqualTo(200);
            assertThat(app.get("/cap/quick/mapped", "X-Client", client).statusCode()).isEqualTo(500);
            for (int i = 0; i < 4; i++) {
                Gates.open(client + "-" + i);
                assertThat(status(slow.get(i))).isEqualTo(200);
            }
            for (int i = 0; i < 6; i++) {
                assertThat(app.get("/cap/quick/x", "X-Client", client).statusCode()).as("every lease returned")
                        .isEqualTo(200);
            }
            for (int i = 0; i < 5; i++) {
                assertThat(app.get("/cap/quick/unmapped", "X-Client", client).statusCode()).isEqualTo(500);
            }
            assertThat(app.get("/cap/quick/x", "X-Client", client).statusCode())
                    .as("Jersey runs the response filter for an unmapped exception (as 500): its lease is returned")
                    .isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void aRateLimitAndACapOnOneMethodAreAllOrNothing(String store) throws Exception {
        String client = "jaxrs-both-" + UUID.randomUUID();
        try (JerseyApp app = start(store)) {
            String gate = client + "-held";
            CompletableFuture<HttpResponse<String>> held = inFlight(app, "/cap/both/" + gate, client, gate);
            assertThat(header(app.get("/cap/both/none", "X-Client", client), "Retry-After")).isEqualTo("1");
            for (int i = 0; i < 3; i++) {
                assertThat(app.get("/cap/both/none", "X-Client", client).body()).as("refused its lease, refunded")
                        .contains("in flight");
            }
            Gates.open(gate);
            assertThat(status(held)).isEqualTo(200);
            HttpResponse<String> second = app.get("/cap/both/none", "X-Client", client);
            assertThat(second.statusCode()).isEqualTo(200);
            assertThat(header(second, "RateLimit-Remaining")).as("two charged: the refused ones were not")
                    .isEqualTo("1");
            assertThat(app.get("/cap/both/none", "X-Client", client).statusCode()).isEqualTo(200);
            HttpResponse<String> spent = app.get("/cap/both/none", "X-Client", client);
            assertThat(spent.statusCode()).isEqualTo(429);
            assertThat(spent.body()).contains("Rate limit exceeded for policy 'jaxrs-both-rate'");
        }
    }
}
