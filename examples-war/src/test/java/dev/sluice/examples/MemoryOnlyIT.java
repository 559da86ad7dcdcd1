package dev.sluice.examples;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A memory-only application has no Redisson or netty on its class path: the examples WAR, without
 * sluice-redis and the jars only it needs ({@link MemoryOnlyWar}), deployed with
 * {@code store=memory} in a Jetty whose own class path lacks them too (a JVM of its own,
 * {@link MemoryOnlyContainer}; the test JVM's holds Redisson), limits over real HTTP, and its
 * class loader cannot load {@code org.redisson.Redisson} or {@code io.netty.channel.Channel}.
 * Asked for a Redis store, the same application does not start, and says which module is missing.
 */
class MemoryOnlyIT {

    private static MemoryOnlyWar war;

    @BeforeAll
    static void unpack() throws Exception {
        war = MemoryOnlyWar.unpack(Http.war());
    }

    @AfterAll
    static void delete() {
        if (war != null) {
            war.close();
        }
    }

    @Test
    void theWarOnTheMemoryStoreLimitsWithoutRedissonOrNetty() throws Exception {
        // Otherwise the proof would prove nothing: the WAR as packaged bundles all three.
        assertThat(war.removed).anyMatch(jar -> jar.startsWith("sluice-redis-"))
                .anyMatch(jar -> jar.startsWith("redisson-")).anyMatch(jar -> jar.startsWith("netty-transport-"));
        try (MemoryOnlyContainer container = MemoryOnlyContainer.start(war, "memory")) {
            assertThat(container.failure()).as(container.output()).isNull();

            // The servlet filter (web.xml): 5 per 10 s, one more every 2 s.
            String key = "memory-only-" + UUID.randomUUID();
            HttpResponse<String> first = Http.get(container, "hello", key);
            assertThat(first.statusCode()).isEqualTo(200);
            assertThat(Http.header(first, "RateLimit-Limit")).isEqualTo("5");
            assertThat(Http.header(first, "RateLimit-Remaining")).isEqualTo("4");
            assertThat(Http.header(first, "RateLimit-Policy")).isEqualTo("\"hello\";q=5;w=10");
            assertRefusedWithin(container, "hello", key, 10, "hello", 2);

            // The JAX-RS feature (@RateLimit): 5 in any minute, estimated over two fixed windows, so a
            // refusal may wait into the next one: up to 60 + 12 s.
            HttpResponse<String> window = Http.get(container, "api/window", key);
            assertThat(window.statusCode()).isEqualTo(200);
            assertThat(Http.header(window, "RateLimit-Limit")).isEqualTo("5");
            assertThat(Http.header(window, "RateLimit-Remaining")).isEqualTo("4");
            assertRefusedWithin(container, "api/window", key, 4, "window", 72);

            HttpResponse<String> probe = Http.get(container, MemoryOnlyServer.PROBE.substring(1), null);
            assertThat(probe.statusCode()).isEqualTo(200);
            assertThat(probe.body().lines().toList()).as("the application's class loader")
                    .isEqualTo(Arrays.stream(MemoryOnlyProbe.FORBIDDEN).map(name -> name + ": absent").toList());
        }
    }

    @Test
    void aRedisStoreFailsStartUpNamingTheModuleItNeeds() throws Exception {
        try (MemoryOnlyContainer container = MemoryOnlyContainer.start(war, "redis://127.0.0.1:6379")) {
            assertThat(container.failure()).as(container.output())
                    .contains("'store' redis://127.0.0.1:6379 needs dev.sluice:sluice-redis on the class path");
            assertThat(container.awaitExit()).isEqualTo(1);
        }
    }

    /** At most {@code allowed} more requests pass, then one is refused with the 429 contract. */
    private static void assertRefusedWithin(Deployed app, String path, String key, int allowed, String policy,
                                            long maxRetryAfter) {
        HttpResponse<String> response = Http.get(app, path, key);
        for (int i = 0; i < allowed && response.statusCode() == 200; i++) {
            response = Http.get(app, path, key);
        }
        assertThat(response.statusCode()).as("after %d more requests to %s", allowed, path).isEqualTo(429);
        assertThat(Long.parseLong(Http.header(response, "Retry-After"))).isBetween(1L, maxRetryAfter);
        assertThat(Http.header(response, "RateLimit-Remaining")).isEqualTo("0");
        assertThat(Http.header(response, "Content-Type")).startsWith("application/problem+json");
        Map<String, Object> problem = Http.json(response);
        assertThat(problem).containsEntry("status", 429L).containsEntry("policy", policy);
    }
}
