package dev.sluice.servlet;

import dev.sluice.testing.TestRedis;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code charge=after} over real HTTP in Jetty, on the memory store and on Redis: only the
 * responses whose status is in {@code charge-when} are charged, synchronous, asynchronous and
 * failing alike.
 */
class ChargeAfterTest {

    static List<Arguments> containersAndStores() {
        List<Arguments> cases = new ArrayList<>();
        for (Container container : Container.selected()) {
            cases.add(Arguments.of(container, "memory"));
            cases.add(Arguments.of(container, TestRedis.shared().url()));
        }
        return cases;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void theLoginRecipeCountsWrongPasswordsOnly(Container container, String store) throws Exception {
        TestApp app = new TestApp().servlet(new AfterResponseServlet())
                .filter("login", "/login/*", "limit", "5/1h", "key", "header:X-Client", "charge", "after",
                        "charge-when", "401,403", "store", store, "timeout", "2s");
        String client = "login-" + UUID.randomUUID();
        try (var running = container.start(app)) {
            for (int i = 0; i < 20; i++) {
                HttpResponse<String> right = get(running.uri("/login/right"), "X-Client", client);
                assertThat(right.statusCode()).as("correct login %d", i + 1).isEqualTo(200);
                assertThat(header(right, "RateLimit-Remaining")).as("as decided, before the refund").isEqualTo("4");
            }
            for (int i = 0; i < 5; i++) {
                assertThat(get(running.uri("/login/wrong"), "X-Client", client).statusCode()).as("wrong %d", i + 1)
                        .isEqualTo(401);
            }
            for (String attempt : List.of("/login/wrong", "/login/right")) {
                HttpResponse<String> refused = get(running.uri(attempt), "X-Client", client);
                assertThat(refused.statusCode()).as("the sixth attempt, " + attempt).isEqualTo(429);
                assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 3600L);
            }
            assertThat(get(running.uri("/login/right"), "X-Client", client + "-other").statusCode())
                    .as("another caller").isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void asynchronousFailuresExceptionsAndTimeoutsAreChargedAsynchronousSuccessesAreNot(Container container,
            String store)
            throws Exception {
        TestApp app = new TestApp().servlet(new AfterResponseServlet())
                .filter("failures", "/*", "limit", "3/1h", "key", "header:X-Client", "charge", "after", "store", store,
                        "timeout", "2s");
        String client = "async-" + UUID.randomUUID();
        try (var running = container.start(app)) {
            for (int i = 0; i < 6; i++) {
                assertThat(get(running.uri("/async/200"), "X-Client", client).statusCode()).isEqualTo(200);
                if (i < 3) {
                    assertThat(get(running.uri("/async/204"), "X-Client", client).statusCode()).isEqualTo(204);
                    assertThat(get(running.uri("/async/404"), "X-Client", client + "-404").statusCode()).isEqualTo(404);
                }
            }
            assertThat(get(running.uri("/x"), "X-Client", client + "-404").statusCode())
                    .as("three asynchronous 404s were charged").isEqualTo(429);
            assertThat(get(running.uri("/async/503"), "X-Client", client).statusCode()).isEqualTo(503);
            assertThat(get(running.uri("/throw"), "X-Client", client).statusCode()).isEqualTo(500);
            assertThat(get(running.uri("/async-timeout"), "X-Client", client).statusCode()).isEqualTo(500);
            HttpResponse<String> refused = get(running.uri("/async/200"), "X-Client", client);
            assertThat(refused.statusCode()).as("an async 503, an exception and an async timeout were charged")
                    .isEqualTo(429);
            assertThat(header(refused, "Retry-After")).isNotNull();
        }
    }
}
