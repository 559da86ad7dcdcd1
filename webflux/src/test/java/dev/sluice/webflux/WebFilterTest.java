package dev.sluice.webflux;

import dev.sluice.testing.HttpCalls;
import dev.sluice.testing.TestRedis;
import dev.sluice.web.HttpLimiter;
import dev.sluice.web.KeyResolver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.web.server.WebFilter;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The filter on Reactor Netty over real HTTP, on the memory store and on a real Redis, with
 * BlockHound watching every event loop (installed by its JUnit Platform listener): a blocking call
 * on a Netty thread fails the request, so every 200 and 429 here was answered without blocking one.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WebFilterTest {

    private final List<RateLimitWebFilter> filters = new ArrayList<>();
    private Netty netty;

    @BeforeAll
    void start() {
        String redis = TestRedis.shared().url();
        for (String store : List.of("memory", redis)) {
            String s = store.equals("memory") ? "memory" : "redis";
            filters.add(filter(s + "-two", Map.of("limit", "2/1m", "key", "header:X-Client", "store", store,
                    "timeout", "2s", "headers", "both"), "/" + s + "/two/*"));
            filters.add(filter(s + "-capped", Map.of("algorithm", "concurrency", "limit", "1", "lease", "1m",
                    "key", "header:X-Client", "store", store, "timeout", "2s"), "/" + s + "/capped/*"));
            filters.add(filter(s + "-after", Map.of("limit", "1/1m", "charge", "after", "charge-when", "5xx",
                    "key", "header:X-Client", "store", store, "timeout", "2s"), "/" + s + "/after/*"));
        }
        filters.add(filter("memory-blocking", Map.of("limit", "100/1m", "key", "header:X-Client"), "/blocking/*"));
        KeyResolver failing = request -> {
            throw new IllegalStateException("the application's key resolver failed");
        };
        filters.add(new RateLimitWebFilter(HttpLimiter.builder("filter 'failing'").name("failing")
                .parameters(Map.of("limit", "5/1m")::get).keyResolver(failing).build(), List.of("/failing/*")));
        netty = new Netty(new ArrayList<WebFilter>(filters));
    }

    private static RateLimitWebFilter filter(String name, Map<String, String> parameters, String pattern) {
        return new RateLimitWebFilter(HttpLimiter.builder("filter '" + name + "'").name(name)
                .parameters(parameters::get).build(), List.of(pattern));
    }

    @AfterAll
    void stop() {
        netty.close();
        filters.forEach(RateLimitWebFilter::close);
    }

    private HttpResponse<String> get(String path, String client) {
        return HttpCalls.send("GET", netty.uri(path), "X-Client", client);
    }

    @Test
    void memoryAnswers429WithRetryAfterAndHeadersAndAProblem() {
        refusesTheThird("memory");
    }

    @Test
    void redisAnswers429WithRetryAfterAndHeadersAndAProblem() {
        refusesTheThird("redis");
    }

    private void refusesTheThird(String store) {
        String client = UUID.randomUUID().toString();
        HttpResponse<String> first = get("/" + store + "/two/a", client);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("ok");
        assertThat(HttpCalls.header(first, "RateLimit-Limit")).isEqualTo("2");
        assertThat(HttpCalls.header(first, "RateLimit-Remaining")).isEqualTo("1");
        assertThat(HttpCalls.header(first, "RateLimit-Policy")).contains(store + "-two");
        assertThat(HttpCalls.header(first, "X-Outcome")).isEqualTo("allowed");
        assertThat(get("/" + store + "/two/b", client).statusCode()).isEqualTo(200);
        HttpResponse<String> third = get("/" + store + "/two/a", client);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(HttpCalls.header(third, "Retry-After"))).isBetween(1L, 60L);
        assertThat(HttpCalls.header(third, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(HttpCalls.header(third, "Content-Type")).isEqualTo("application/problem+json");
        assertThat(third.body()).contains("\"status\":429");
        // Another caller has its own budget; a path outside the patterns is not limited.
        assertThat(get("/" + store + "/two/a", UUID.randomUUID().toString()).statusCode()).isEqualTo(200);
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> outside = get("/" + store + "/other", client);
            assertThat(outside.statusCode()).isEqualTo(200);
            assertThat(HttpCalls.header(outside, "RateLimit-Limit")).isNull();
        }
    }

    @Test
    void memoryLeaseComesBackWhenTheClientGoesAwayMidRequest() throws Exception {
        leaseComesBack("memory");
    }

    @Test
    void redisLeaseComesBackWhenTheClientGoesAwayMidRequest() throws Exception {
        leaseComesBack("redis");
    }

    private void leaseComesBack(String store) throws Exception {
        String client = UUID.randomUUID().toString();
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), netty.port())) {
            OutputStream out = socket.getOutputStream();
            out.write(("GET /" + store + "/capped/hang HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Client: " + client
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            awaitHanging(client);
            // The one place is taken while the request hangs.
            HttpResponse<String> refused = get("/" + store + "/capped/fast", client);
            assertThat(refused.statusCode()).isEqualTo(429);
        } // the client goes away mid-request
        // The lease lasts a minute: only the cancelled request's end can give it back this soon.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int status;
        do {
            status = get("/" + store + "/capped/fast", client).statusCode();
            if (status != 200) {
                Thread.sleep(50);
            }
        } while (status != 200 && System.nanoTime() < deadline);
        assertThat(status).as("a request after the client went away").isEqualTo(200);
    }

    private static void awaitHanging(String client) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (Netty.HANGING.getOrDefault(client, new AtomicInteger()).get() == 0) {
            assertThat(System.nanoTime()).as("the hanging request started").isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    @Test
    void memoryChargeAfterRefundsAStatusNotCharged() throws InterruptedException {
        chargeAfter("memory");
    }

    @Test
    void redisChargeAfterRefundsAStatusNotCharged() throws InterruptedException {
        chargeAfter("redis");
    }

    private void chargeAfter(String store) throws InterruptedException {
        String client = UUID.randomUUID().toString();
        // 404s are not charged (charge-when=5xx): the one unit comes back after each (on Redis, by a
        // refund sent after the response, so the next request may come before it lands).
        for (int i = 0; i < 3; i++) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int status;
            do {
                status = get("/" + store + "/after/status/404", client).statusCode();
                if (status == 429) {
                    Thread.sleep(20);
                }
            } while (status == 429 && System.nanoTime() < deadline);
            assertThat(status).isEqualTo(404);
        }
        awaitAdmitted("/" + store + "/after/status/503", client, 503);
        // A 503 is charged: the one unit a minute is spent for good.
        for (int i = 0; i < 3; i++) {
            assertThat(get("/" + store + "/after/status/404", client).statusCode()).isEqualTo(429);
            Thread.sleep(20);
        }
    }

    private void awaitAdmitted(String path, String client, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int status;
        do {
            status = get(path, client).statusCode();
            if (status == 429) {
                Thread.sleep(20);
            }
        } while (status == 429 && System.nanoTime() < deadline);
        assertThat(status).isEqualTo(expected);
    }

    @Test
    void aBlockingCallOnTheEventLoopBehindTheFilterFails() {
        // Proof that the watch is on: behind the filter, on the memory store, the chain runs on a Netty
        // event loop, where BlockHound turns a sleep into an error (500).
        String client = UUID.randomUUID().toString();
        assertThat(get("/blocking/ok", client).statusCode()).isEqualTo(200);
        assertThat(get("/blocking/block", client).statusCode()).isEqualTo(500);
    }

    @Test
    void aFailingKeyResolverFailsTheRequestAndNeverHangsIt() {
        for (int i = 0; i < 3; i++) {
            assertThat(get("/failing/a", UUID.randomUUID().toString()).statusCode()).isEqualTo(500);
        }
    }

    @Test
    void aBadUrlPatternIsRefusedNamingIt() {
        HttpLimiter limiter = HttpLimiter.builder("filter 'bad'").parameters(Map.of("limit", "1/s")::get).build();
        try {
            assertThatThrownBy(() -> new RateLimitWebFilter(limiter, List.of("/api/*/orders")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("'url-patterns' must be servlet url-patterns such as /api/*, *.json or /orders, "
                            + "got '/api/*/orders'");
        } finally {
            limiter.close();
        }
    }
}
