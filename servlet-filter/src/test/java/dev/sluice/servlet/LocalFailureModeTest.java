package dev.sluice.servlet;

import dev.sluice.testing.StallingProxy;
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

/**
 * {@code failure-mode=local} over HTTP, in web.xml terms: two application instances share one
 * Redis (through a stalling proxy). Redis stalled, then killed: each instance keeps answering 429
 * after its local budget, within a bounded time. Redis back: the instances are limited by Redis
 * again, and one sees what the other spent.
 */
class LocalFailureModeTest {

    private static final Duration TIMEOUT = Duration.ofMillis(300);
    /** Five times the timeout: a decision that waits the timeout, then HTTP on a busy machine. */
    private static final Duration PROMPT = TIMEOUT.multipliedBy(5);

    static Iterable<Container> containers() {
        return Container.selected();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("containers")
    void aLocalRouteKeepsLimitingWhileRedisIsStalledThenKilledAndRedisLimitsAgainWhenItReturns(Container container)
            throws Exception {
        TestRedis redis = TestRedis.start();
        try (StallingProxy proxy = new StallingProxy(redis.port())) {
            String[] params = {"policy", "local-route", "limit", "6/1h", "algorithm", "fixed-window",
                "key", "header:X-API-Key", "store", proxy.url(), "timeout", "300ms", "failure-mode", "local",
                "local-share", "0.5"};
            try (var one = container.start(new TestApp().filter("local-one", "/*", params));
                 var two = container.start(new TestApp().filter("local-two", "/*", params))) {
                URI first = one.uri("/x");
                URI second = two.uri("/x");
                decidedByRedis(first);
                decidedByRedis(second);

                proxy.stall();
                String paused = "paused-" + UUID.randomUUID();
                spendTheLocalBudget(first, paused);

                redis.stop();
                assertThat(promptly(first, paused).statusCode()).as("the local state outlives the kill").isEqualTo(429);
                spendTheLocalBudget(first, "killed-" + UUID.randomUUID());
                spendTheLocalBudget(second, "killed-" + UUID.randomUUID());

                proxy.release();
                redis.restart();
                decidedByRedis(first);
                decidedByRedis(second);
                String shared = "shared-" + UUID.randomUUID();
                for (int i = 0; i < 6; i++) {
                    HttpResponse<String> response = get(i % 2 == 0 ? first : second, "X-API-Key", shared);
                    assertThat(response.statusCode()).as("request %d, from Redis again", i + 1).isEqualTo(200);
                    assertThat(header(response, "RateLimit-Limit")).isEqualTo("6");
                    assertThat(header(response, "RateLimit-Remaining")).as("the shared count")
                            .isEqualTo(Integer.toString(5 - i));
                }
                assertThat(get(first, "X-API-Key", shared).statusCode()).isEqualTo(429);
                assertThat(get(second, "X-API-Key", shared).statusCode()).isEqualTo(429);
            }
        } finally {
            redis.stop();
        }
    }

    /** The local budget of 6 * 0.5: three 200s with its headers, then 429s with Retry-After; each prompt. */
    private static void spendTheLocalBudget(URI uri, String key) {
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> response = promptly(uri, key);
            assertThat(response.statusCode()).as("local request %d", i + 1).isEqualTo(200);
            assertThat(response.body()).isEqualTo("ok");
            assertThat(header(response, "RateLimit-Limit")).as("the local limit").isEqualTo("3");
            assertThat(header(response, "RateLimit-Remaining")).isEqualTo(Integer.toString(2 - i));
        }
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> refused = promptly(uri, key);
            assertThat(refused.statusCode()).isEqualTo(429);
            assertThat(Long.parseLong(header(refused, "Retry-After"))).isBetween(1L, 3_600L);
            assertThat(header(refused, "RateLimit-Limit")).isEqualTo("3");
            assertThat(header(refused, "RateLimit-Remaining")).isEqualTo("0");
            assertThat(header(refused, "Content-Type")).startsWith("application/problem+json");
            assertThat(Http.json(refused)).containsEntry("status", 429L).containsEntry("policy", "local-route");
        }
    }

    /** One request, which must be answered within {@link #PROMPT}. */
    private static HttpResponse<String> promptly(URI uri, String key) {
        long started = System.nanoTime();
        HttpResponse<String> response = get(uri, "X-API-Key", key);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("one request while Redis cannot answer")
                .isLessThan(PROMPT);
        return response;
    }

    /** GETs with fresh keys until Redis decides (its limit of 6 in the headers), for at most 30 s. */
    private static void decidedByRedis(URI uri) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        HttpResponse<String> response = get(uri, "X-API-Key", "probe-" + UUID.randomUUID());
        while (!"6".equals(header(response, "RateLimit-Limit")) && System.nanoTime() < deadline) {
            Thread.sleep(100); // bounded polling while the client connects or the circuit's probe waits
            response = get(uri, "X-API-Key", "probe-" + UUID.randomUUID());
        }
        assertThat(header(response, "RateLimit-Limit")).as("decided by Redis").isEqualTo("6");
    }
}
