package dev.sluice.servlet;

import dev.sluice.testing.TestRedis;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

import static dev.sluice.servlet.Http.get;
import static dev.sluice.servlet.Http.header;
import static org.assertj.core.api.Assertions.assertThat;

/** The filter on a real Redis: one budget across application instances, and store failures. */
class RedisTest {

    static Iterable<Container> containers() {
        return Container.selected();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void twoApplicationInstancesShareOnePolicyThroughOneRedis(Container container) throws Exception {
        String store = TestRedis.shared().url();
        String[] params = {"policy", "shared", "limit", "4/1m", "key", "header:X-API-Key", "store", store,
            "timeout", "2s"};
        String key = "k-" + UUID.randomUUID(); // the shared Redis outlives this test
        try (var one = container.start(new TestApp().filter("shared-one", "/*", params));
             var two = container.start(new TestApp().filter("shared-two", "/*", params))) {
            for (int i = 0; i < 4; i++) {
                var node = i % 2 == 0 ? one : two;
                HttpResponse<String> response = get(node.uri("/x"), "X-API-Key", key);
                assertThat(response.statusCode()).as("request %d", i).isEqualTo(200);
                assertThat(header(response, "RateLimit-Remaining")).isEqualTo(Integer.toString(3 - i));
            }
            assertThat(get(one.uri("/x"), "X-API-Key", key).statusCode()).isEqualTo(429);
            assertThat(get(two.uri("/x"), "X-API-Key", key).statusCode()).isEqualTo(429);
            assertThat(get(two.uri("/x"), "X-API-Key", key + "-other").statusCode()).isEqualTo(200);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aStoppedRedisFailsOpenOrClosedWithinTheTimeoutAndLimitingResumesAfterRestart(Container container)
            throws Exception {
        TestRedis redis = TestRedis.start();
        Duration timeout = Duration.ofMillis(500);
        Duration bound = timeout.plusSeconds(2); // the decision's timeout plus HTTP and scheduling margin
        TestApp app = new TestApp()
                .filter("lenient", "/open/*", "limit", "100/1m", "key", "header:X-API-Key", "store", redis.url(),
                        "failure-mode", "open", "timeout", "500ms")
                .filter("strict", "/closed/*", "limit", "3/1m", "key", "header:X-API-Key", "store", redis.url(),
                        "failure-mode", "closed", "timeout", "500ms");
        try (var running = container.start(app)) {
            URI open = running.uri("/open/x");
            URI closed = running.uri("/closed/x");
            // The first decisions may meet a connection still being made; wait (bounded) until Redis decides.
            assertThat(header(decided(open), "RateLimit-Limit")).isEqualTo("100");
            assertThat(header(decided(closed), "RateLimit-Limit")).isEqualTo("3");

            redis.stop();
            for (int i = 0; i < 3; i++) {
                long start = System.nanoTime();
                HttpResponse<String> lenient = get(open, "X-API-Key", "a");
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                assertThat(lenient.statusCode()).isEqualTo(200);
                assertThat(lenient.body()).isEqualTo("ok");
                assertThat(header(lenient, "RateLimit-Limit")).isNull();
                assertThat(header(lenient, "RateLimit-Remaining")).isNull();
                assertThat(took).isLessThan(bound);

                start = System.nanoTime();
                HttpResponse<String> strict = get(closed, "X-API-Key", "a");
                took = Duration.ofNanos(System.nanoTime() - start);
                assertThat(strict.statusCode()).isEqualTo(503);
                assertThat(header(strict, "Retry-After")).isEqualTo("1");
                assertThat(header(strict, "Content-Type")).startsWith("application/problem+json");
                assertThat(Http.json(strict)).containsEntry("status", 503L)
                        .containsEntry("title", "Service Unavailable");
                assertThat(took).isLessThan(bound);
            }

            redis.restart();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            HttpResponse<String> probe = get(closed, "X-API-Key", "probe");
            while (probe.statusCode() != 200 && System.nanoTime() < deadline) {
                Thread.sleep(100); // bounded polling while Redisson reconnects
                probe = get(closed, "X-API-Key", "probe");
            }
            assertThat(probe.statusCode()).as("limiting resumed after the restart").isEqualTo(200);
            assertThat(header(probe, "RateLimit-Limit")).isEqualTo("3");

            // Decisions are made again: a fresh caller gets exactly its 3 requests.
            for (int i = 0; i < 3; i++) {
                assertThat(get(closed, "X-API-Key", "fresh").statusCode()).isEqualTo(200);
            }
            assertThat(get(closed, "X-API-Key", "fresh").statusCode()).isEqualTo(429);
            assertThat(header(get(open, "X-API-Key", "a"), "RateLimit-Limit")).isEqualTo("100");
        } finally {
            redis.stop();
        }
    }

    /** GETs until the answer carries rate-limit headers (Redis decided), for at most 20 s. */
    private static HttpResponse<String> decided(URI uri) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        HttpResponse<String> response = get(uri, "X-API-Key", "a");
        while (header(response, "RateLimit-Limit") == null && System.nanoTime() < deadline) {
            Thread.sleep(50);
            response = get(uri, "X-API-Key", "a");
        }
        return response;
    }
}
