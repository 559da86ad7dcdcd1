package dev.sluice.servlet;

import dev.sluice.testing.Ends;
import dev.sluice.testing.ResettingClient;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The login recipe ({@code charge=after}, {@code charge-when=401,403}, 5 attempts) against a
 * client that reads the status line of each 401 and resets the connection, over real HTTP in
 * Jetty EE10 and EE11, on the memory store and on Redis. The 401 page is larger than the response
 * buffer and written to the output stream in pieces, so the status is committed first and the
 * application's next write throws: the status the client received decides, so every attempt is
 * charged and the sixth is refused. (Once seen admitting every attempt: the exception counted as
 * 500, which {@code 401,403} does not charge.)
 */
class ResetAfterStatusTest {

    static List<Arguments> containersAndStores() {
        return ChargeAfterTest.containersAndStores();
    }

    private static TestApp login(String store) {
        return new TestApp().servlet(new UnhappyServlet())
                .instance("ends", new UnhappyServlet.EndsFilter(), "/*")
                .filter("login", "/*", "limit", "5/1h", "key", "header:X-Client", "charge", "after",
                        "charge-when", "401,403", "store", store, "timeout", "2s");
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void aClientThatResetsAfterTheStatusLineOfA401IsChargedForIt(Container container, String store) throws Exception {
        attackTheLogin(container, store, "/page/401");
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("containersAndStores")
    void soIsOneWhoseAsynchronousPageFailsAfterTheStatusLine(Container container, String store) throws Exception {
        attackTheLogin(container, store, "/async-page/401");
    }

    private static void attackTheLogin(Container container, String store, String page) throws Exception {
        String client = "reset-" + UUID.randomUUID();
        try (var running = container.start(login(store))) {
            Http.awaitDecided("GET", running.uri("/none"), "X-Client", client + "-warm-up");
            for (int i = 0; i < 5; i++) {
                assertThat(ResettingClient.statusThenReset(running.uri(page), "X-Client", client))
                        .as("wrong password %d", i + 1).isEqualTo(401);
                // the server is done with the attempt, refund or not, before the next one
                Ends.await(client, i + 1);
            }
            assertThat(ResettingClient.statusThenReset(running.uri(page), "X-Client", client))
                    .as("the sixth attempt after five 401s, each reset after its status line").isEqualTo(429);
            assertThat(ResettingClient.statusThenReset(running.uri("/page/200"), "X-Client", client))
                    .as("the right password too").isEqualTo(429);
        }
    }
}
