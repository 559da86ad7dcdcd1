package dev.sluice.javax;

import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.testing.Ends;
import dev.sluice.testing.HttpCalls;
import dev.sluice.testing.ResettingClient;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import javax.servlet.FilterRegistration;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The javax filter in Tomcat 9, on the memory store and on Redis, against clients that end
 * requests badly: the login recipe ({@code charge=after}, {@code charge-when=401,403}, 5
 * attempts) against a client that reads the status line of each 401 and resets the connection
 * while the page is still being written, synchronously or from an async thread (once seen
 * admitting every attempt: the failed write counted as 500, which is refunded); and a request
 * that starts a second async cycle, which returns its concurrency lease and is charged by its
 * status (once seen keeping its lease: the container drops the first cycle's listeners).
 */
class ResponseEndsTomcat9Test {

    /**
     * Where Tomcat 9 logs "Encountered a non-recycled request and recycled it forcedly": now and
     * then, when the client resets while an async page is still being written, Tomcat releases the
     * connection's processor before the async cycle ends and recycles the request without running
     * its async listeners, so neither Sluice nor the test application hears that request end. Such
     * an attempt is never refunded (it stays charged, as decided), which the assertions after the
     * loop check; the loop counts it as over, since the server is done with it.
     */
    private static final Logger COYOTE = Logger.getLogger("org.apache.catalina.connector.CoyoteAdapter");

    @TempDir
    Path tomcatBase;

    private static String store(String which) {
        return which.equals("redis") ? TestRedis.shared().url() : "memory";
    }

    /** The {@code unhappy} application with one Sluice filter of {@code params} behind its ends filter. */
    private Running deploy(String... params) throws Exception {
        return Tomcat9.deploy(WebApp.named("unhappy"), tomcatBase, (classes, context) -> {
            FilterRegistration.Dynamic filter = context.addFilter("limited", RateLimitFilter.class);
            filter.setAsyncSupported(true);
            for (int i = 0; i < params.length; i += 2) {
                filter.setInitParameter(params[i], params[i + 1]);
            }
            filter.addMappingForUrlPatterns(null, true, "/*");
        });
    }

    /** Waits until the store decides (a Redis client connecting at start-up fails the first decisions open). */
    private static void warmUp(Running app, String client) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (HttpCalls.header(HttpCalls.send("GET", app.uri("/none"), "X-Client", client + "-warm-up"),
                "RateLimit-Limit")
                == null && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void aClientThatResetsAfterTheStatusLineOfA401IsChargedForIt(String store) throws Exception {
        attackTheLogin(store, "/page/401");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void soIsOneWhoseAsynchronousPageFailsAfterTheStatusLine(String store) throws Exception {
        attackTheLogin(store, "/async-page/401");
    }

    private void attackTheLogin(String store, String page) throws Exception {
        String client = "tomcat-reset-" + UUID.randomUUID();
        try (Running app = deploy("limit", "5/15m", "algorithm", "sliding-window", "key", "header:X-Client", "charge",
                "after", "charge-when", "401,403", "store", store(store), "timeout", "2s")) {
            warmUp(app, client);
            AtomicInteger recycled = new AtomicInteger();
            Handler forcedRecycles = new Handler() {
                @Override
                public void publish(LogRecord record) {
                    if (record.getThrown() != null && record.getThrown().getClass().getName()
                            .endsWith("RecycleRequiredException")) {
                        recycled.incrementAndGet();
                    }
                }

                @Override
                public void flush() {
                }

                @Override
                public void close() {
                }
            };
            COYOTE.addHandler(forcedRecycles);
            try {
                for (int i = 0; i < 5; i++) {
                    assertThat(ResettingClient.statusThenReset(app.uri(page), "X-Client", client))
                            .as("wrong password %d", i + 1).isEqualTo(401);
                    // the server is done with the attempt, refund or not, before the next one
                    awaitOver(client, i + 1, recycled);
                }
            } finally {
                COYOTE.removeHandler(forcedRecycles);
            }
            assertThat(ResettingClient.statusThenReset(app.uri(page), "X-Client", client))
                    .as("the sixth attempt after five 401s, each reset after its status line").isEqualTo(429);
            assertThat(ResettingClient.statusThenReset(app.uri("/page/200"), "X-Client", client))
                    .as("the right password too").isEqualTo(429);
        }
    }

    /** Waits (at most 20 s) until {@code count} attempts ended or were recycled by Tomcat without an end. */
    private static void awaitOver(String client, int count, AtomicInteger recycled) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (Ends.count(client) + recycled.get() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("only " + Ends.count(client) + " of " + count + " requests of " + client
                        + " ended and " + recycled.get() + " were recycled by Tomcat without an end");
            }
            Thread.sleep(5);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void aSecondAsyncCycleReturnsItsLease(String store) throws Exception {
        String client = "tomcat-twice-cap-" + UUID.randomUUID();
        try (Running app = deploy("algorithm", "concurrency", "limit", "1", "lease", "30s", "key", "header:X-Client",
                "store", store(store), "timeout", "2s")) {
            for (int i = 0; i < 3; i++) {
                assertThat(HttpCalls.send("GET", app.uri("/twice/200"), "X-Client", client).statusCode())
                        .as("request %d, one at a time", i + 1).isEqualTo(200);
                Ends.await(client, i + 1);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"memory", "redis"})
    void aSecondAsyncCycleIsChargedByItsStatus(String store) throws Exception {
        String client = "tomcat-twice-charged-" + UUID.randomUUID();
        try (Running app = deploy("limit", "2/1h", "key", "header:X-Client", "charge", "after", "store", store(store),
                "timeout", "2s")) {
            warmUp(app, client);
            int ended = 0;
            for (String path : new String[] {"/twice/200", "/twice/200", "/twice/200", "/twice/401", "/twice/401"}) {
                assertThat(HttpCalls.send("GET", app.uri(path), "X-Client", client).statusCode()).as(path)
                        .isEqualTo(Integer.parseInt(path.substring("/twice/".length())));
                Ends.await(client, ++ended);
            }
            assertThat(HttpCalls.send("GET", app.uri("/twice/200"), "X-Client", client).statusCode())
                    .as("the successes refunded, the two 401s charged").isEqualTo(429);
        }
    }
}
