package dev.sluice.spring.boot;

import dev.sluice.testing.HttpCalls;
import dev.sluice.testing.TestRedis;
import dev.sluice.webflux.RateLimitWebFilter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.reactor.netty.autoconfigure.NettyReactiveWebServerAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.HttpHandlerAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.error.ErrorWebFluxAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Started Boot WebFlux applications on Reactor Netty, limited by {@code sluice.filters.<name>.*}
 * through the starter's reactive auto-configuration alone, over real HTTP on 127.0.0.1, on the
 * memory store and on a real Redis; three of them share one Redis.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReactiveStarterTest {

    /** WebFlux on Reactor Netty, Sluice, and {@link Handlers}. */
    @SpringBootConfiguration
    @ImportAutoConfiguration({SluiceReactiveAutoConfiguration.class, SluiceAutoConfiguration.class,
            NettyReactiveWebServerAutoConfiguration.class, HttpHandlerAutoConfiguration.class,
            WebFluxAutoConfiguration.class, ErrorWebFluxAutoConfiguration.class})
    static class Application {
    }

    /** Requests of {@code /.../hang} started, per {@code X-Client}. */
    static final Map<String, AtomicInteger> HANGING = new ConcurrentHashMap<>();

    /** "ok" on every path; {@code .../hang} never answers. */
    @RestController
    static class Handlers {
        @GetMapping(path = "/**/hang")
        Mono<String> hang(@RequestHeader("X-Client") String client) {
            HANGING.computeIfAbsent(client, c -> new AtomicInteger()).incrementAndGet();
            return Mono.never();
        }

        @GetMapping(path = "/**", produces = "text/plain")
        Mono<String> ok() {
            return Mono.just("ok");
        }
    }

    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();
    private ConfigurableApplicationContext app;
    private final List<Integer> shared = new ArrayList<>();

    @BeforeAll
    void start() {
        String redis = TestRedis.shared().url();
        app = start(List.of(
                "sluice.timeout=2s", "sluice.key=header:X-Client", "sluice.headers=both",
                "sluice.filters.mem.limit=2/1m", "sluice.filters.mem.url-patterns=/mem/*",
                "sluice.filters.red.limit=2/1m", "sluice.filters.red.store=" + redis,
                "sluice.filters.red.url-patterns=/red/*",
                "sluice.filters.memcap.algorithm=concurrency", "sluice.filters.memcap.limit=1",
                "sluice.filters.memcap.lease=1m", "sluice.filters.memcap.url-patterns=/memcap/*",
                "sluice.filters.redcap.algorithm=concurrency", "sluice.filters.redcap.limit=1",
                "sluice.filters.redcap.lease=1m", "sluice.filters.redcap.store=" + redis,
                "sluice.filters.redcap.url-patterns=/redcap/*"));
        // Three instances of one application on one Redis: one policy, one budget.
        for (int i = 0; i < 3; i++) {
            ConfigurableApplicationContext instance = start(List.of("sluice.store=" + redis, "sluice.timeout=2s",
                    "sluice.key=header:X-Client", "sluice.filters.shared.limit=10/1h",
                    "sluice.filters.shared.url-patterns=/shared/*"));
            shared.add(port(instance));
        }
    }

    private ConfigurableApplicationContext start(List<String> sluice) {
        List<String> properties = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
                "spring.main.banner-mode=off"));
        properties.addAll(sluice);
        ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class, Handlers.class)
                .web(WebApplicationType.REACTIVE).properties(properties.toArray(String[]::new)).run();
        apps.add(context);
        return context;
    }

    private static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @AfterAll
    void stop() {
        apps.forEach(ConfigurableApplicationContext::close);
    }

    private HttpResponse<String> get(int port, String path, String client) {
        return HttpCalls.send("GET", URI.create("http://127.0.0.1:" + port + path), "X-Client", client);
    }

    @Test
    void oneWebFilterPerPropertyFilterAndNoServletFilter() {
        // Besides these, the test resources' application.yml gives 'search' and 'account'.
        assertThat(app.getBeansOfType(RateLimitWebFilter.class)).containsKeys("sluice.filters.mem",
                "sluice.filters.red", "sluice.filters.memcap", "sluice.filters.redcap", "sluice.filters.search");
        assertThat(app.getBeansOfType(FilterRegistrations.class)).isEmpty();
    }

    @Test
    void memoryAnswers429WithRetryAfterAndRateLimitHeaders() {
        refusesTheThird("/mem");
    }

    @Test
    void redisAnswers429WithRetryAfterAndRateLimitHeaders() {
        refusesTheThird("/red");
    }

    private void refusesTheThird(String prefix) {
        String client = UUID.randomUUID().toString();
        HttpResponse<String> first = get(port(app), prefix + "/a", client);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("ok");
        assertThat(HttpCalls.header(first, "RateLimit-Limit")).isEqualTo("2");
        assertThat(HttpCalls.header(first, "RateLimit-Remaining")).isEqualTo("1");
        assertThat(get(port(app), prefix + "/b", client).statusCode()).isEqualTo(200);
        HttpResponse<String> third = get(port(app), prefix + "/a", client);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(HttpCalls.header(third, "Retry-After"))).isBetween(1L, 60L);
        assertThat(HttpCalls.header(third, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(HttpCalls.header(third, "RateLimit-Policy")).isNotNull();
        assertThat(HttpCalls.header(third, "Content-Type")).isEqualTo("application/problem+json");
        assertThat(third.body()).contains("\"status\":429");
        assertThat(get(port(app), "/elsewhere", client).statusCode()).isEqualTo(200);
    }

    @Test
    void memoryLeaseComesBackWhenTheClientCancels() throws Exception {
        leaseComesBack("/memcap");
    }

    @Test
    void redisLeaseComesBackWhenTheClientCancels() throws Exception {
        leaseComesBack("/redcap");
    }

    private void leaseComesBack(String prefix) throws Exception {
        String client = UUID.randomUUID().toString();
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port(app))) {
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + prefix + "/hang HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Client: " + client + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (HANGING.getOrDefault(client, new AtomicInteger()).get() == 0) {
                assertThat(System.nanoTime()).as("the hanging request started").isLessThan(deadline);
                Thread.sleep(10);
            }
            assertThat(get(port(app), prefix + "/fast", client).statusCode()).isEqualTo(429);
        } // the client goes away mid-request; the lease would last a minute
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int status;
        do {
            status = get(port(app), prefix + "/fast", client).statusCode();
            if (status != 200) {
                Thread.sleep(50);
            }
        } while (status != 200 && System.nanoTime() < deadline);
        assertThat(status).as("a request after the client went away").isEqualTo(200);
    }

    /**
     * 30 requests at once, spread over three instances on one Redis: exactly the limit, 10, get
     * through, and every request is answered. Repeated: a request was once lost here about once in
     * ten rounds (reaching the filter, its decision made, then cancelled at once and never answered)
     * while the chain went on from the thread that completed a Redis decision; the verdict now goes
     * back to the connection's event loop.
     */
    @RepeatedTest(10)
    void threeInstancesOnOneRedisAdmitExactlyTheLimit() throws Exception {
        String client = UUID.randomUUID().toString();
        ExecutorService pool = Executors.newFixedThreadPool(12);
        try {
            List<CompletableFuture<Integer>> calls = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                int port = shared.get(i % 3);
                calls.add(CompletableFuture.supplyAsync(() -> get(port, "/shared/x", client).statusCode(), pool));
            }
            List<Integer> statuses = new ArrayList<>();
            for (CompletableFuture<Integer> call : calls) {
                try {
                    statuses.add(call.get(30, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    throw new AssertionError("a request was not answered; the threads:\n" + threads(), e);
                }
            }
            assertThat(statuses).containsOnly(200, 429);
            assertThat(statuses.stream().filter(s -> s == 200).count()).isEqualTo(10);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Every thread of this JVM (the three servers, the client), for a request that was never answered. */
    private static String threads() {
        StringBuilder dump = new StringBuilder();
        for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false)) {
            dump.append(thread);
        }
        return dump.toString();
    }
}
