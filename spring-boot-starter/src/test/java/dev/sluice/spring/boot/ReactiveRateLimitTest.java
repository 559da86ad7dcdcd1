package dev.sluice.spring.boot;

import dev.sluice.jaxrs.RateLimit;
import dev.sluice.testing.HttpCalls;
import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.jackson.JacksonEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementContextAutoConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.reactor.netty.autoconfigure.NettyReactiveWebServerAutoConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.webflux.autoconfigure.HttpHandlerAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.actuate.endpoint.web.WebFluxHealthEndpointExtensionAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.error.ErrorWebFluxAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @RateLimit} on the handler methods of started Boot WebFlux applications on Reactor Netty,
 * over real HTTP on 127.0.0.1, on the memory store and on a real Redis; and the reactive starter's
 * health contributor {@code sluice} and Actuator endpoint {@code sluice}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReactiveRateLimitTest {

    /** WebFlux on Reactor Netty, Actuator with health, Sluice, and the handlers below. */
    @SpringBootConfiguration
    @ImportAutoConfiguration({SluiceReactiveAutoConfiguration.class, NettyReactiveWebServerAutoConfiguration.class,
            HttpHandlerAutoConfiguration.class, WebFluxAutoConfiguration.class, ErrorWebFluxAutoConfiguration.class,
            JacksonAutoConfiguration.class, EndpointAutoConfiguration.class, JacksonEndpointAutoConfiguration.class,
            WebEndpointAutoConfiguration.class, ManagementContextAutoConfiguration.class,
            HealthContributorAutoConfiguration.class, HealthContributorRegistryAutoConfiguration.class,
            HealthEndpointAutoConfiguration.class, WebFluxHealthEndpointExtensionAutoConfiguration.class})
    static class Application {
    }

    /** Calls of the handler without {@code @RateLimit}. */
    static final AtomicInteger PLAIN = new AtomicInteger();

    /** Handlers limited on the method, and one that is not. */
    @RestController
    static class Handlers {
        @RateLimit(limit = "2/1m", key = "header:X-Client", policy = "annotated")
        @GetMapping(path = "/annotated", produces = "text/plain")
        Mono<String> annotated() {
            return Mono.just("annotated");
        }

        @GetMapping(path = "/plain", produces = "text/plain")
        Mono<String> plain() {
            PLAIN.incrementAndGet();
            return Mono.just("plain");
        }
    }

    /** Every handler limited by the class's annotation. */
    @RestController
    @RateLimit(limit = "1/1m", key = "header:X-Client")
    static class Limited {
        @GetMapping(path = "/limited", produces = "text/plain")
        Mono<String> limited() {
            return Mono.just("limited");
        }
    }

    private final List<ConfigurableApplicationContext> apps = new ArrayList<>();
    private int memory;
    private int redis;
    private int healthOff;

    @BeforeAll
    void start() {
        memory = port(start("management.endpoints.web.exposure.include=health,sluice"));
        redis = port(start("sluice.store=" + TestRedis.shared().url(), "sluice.timeout=2s"));
        healthOff = port(start("management.health.sluice.enabled=false"));
    }

    /** An application with {@code properties} as command-line arguments: over the test resources' application.yml. */
    private ConfigurableApplicationContext start(String... properties) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(Application.class, Handlers.class,
                Limited.class).web(WebApplicationType.REACTIVE).properties("server.port=0", "server.address=127.0.0.1",
                "spring.main.banner-mode=off").run(Stream.of(properties).map(p -> "--" + p).toArray(String[]::new));
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

    private static HttpResponse<String> get(int port, String path, String client) {
        return HttpCalls.send("GET", URI.create("http://127.0.0.1:" + port + path), "X-Client", client);
    }

    @Test
    void memoryAnnotatedHandlerAnswers429WithRetryAfter() {
        refusesTheThird(memory);
    }

    @Test
    void redisAnnotatedHandlerAnswers429WithRetryAfter() {
        refusesTheThird(redis);
    }

    private static void refusesTheThird(int port) {
        String client = UUID.randomUUID().toString();
        HttpResponse<String> first = get(port, "/annotated", client);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(first.body()).isEqualTo("annotated");
        assertThat(HttpCalls.header(first, "RateLimit-Remaining")).isEqualTo("1");
        assertThat(get(port, "/annotated", client).statusCode()).isEqualTo(200);
        HttpResponse<String> third = get(port, "/annotated", client);
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(Long.parseLong(HttpCalls.header(third, "Retry-After"))).isBetween(1L, 60L);
        assertThat(HttpCalls.header(third, "Content-Type")).isEqualTo("application/problem+json");
        assertThat(third.body()).contains("\"status\":429");
        // Another caller has its own budget.
        assertThat(get(port, "/annotated", UUID.randomUUID().toString()).statusCode()).isEqualTo(200);
    }

    @Test
    void classAnnotationLimitsItsHandlers() {
        for (int port : List.of(memory, redis)) {
            String client = UUID.randomUUID().toString();
            assertThat(get(port, "/limited", client).statusCode()).isEqualTo(200);
            HttpResponse<String> second = get(port, "/limited", client);
            assertThat(second.statusCode()).isEqualTo(429);
            assertThat(HttpCalls.header(second, "Retry-After")).isNotNull();
        }
    }

    @Test
    void handlerWithoutAnnotationIsUntouched() {
        String client = UUID.randomUUID().toString();
        int before = PLAIN.get();
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> plain = get(memory, "/plain", client);
            assertThat(plain.statusCode()).isEqualTo(200);
            assertThat(plain.body()).isEqualTo("plain");
            assertThat(HttpCalls.header(plain, "RateLimit-Remaining")).isNull();
            assertThat(HttpCalls.header(plain, "RateLimit-Policy")).isNull();
        }
        assertThat(PLAIN.get() - before).isGreaterThanOrEqualTo(5);
    }

    @Test
    void healthContributorSluiceIsThereUnlessSwitchedOff() {
        HttpResponse<String> memoryHealth = get(memory, "/actuator/health/sluice", "h");
        assertThat(memoryHealth.statusCode()).isEqualTo(200);
        assertThat(memoryHealth.body()).contains("\"status\":\"UP\"");
        HttpResponse<String> redisHealth = get(redis, "/actuator/health/sluice", "h");
        assertThat(redisHealth.statusCode()).isEqualTo(200);
        assertThat(redisHealth.body()).contains("\"status\":\"UP\"").contains("redis://");
        assertThat(get(healthOff, "/actuator/health", "h").statusCode()).isEqualTo(200);
        assertThat(get(healthOff, "/actuator/health/sluice", "h").statusCode()).isEqualTo(404);
    }

    @Test
    void endpointListsTheAnnotatedHandlersPolicyWhenExposed() {
        get(memory, "/limited", UUID.randomUUID().toString());
        HttpResponse<String> policies = get(memory, "/actuator/sluice", "e");
        assertThat(policies.statusCode()).isEqualTo(200);
        assertThat(policies.body()).contains("\"name\":\"annotated\"").contains("\"name\":\"Limited.limited~");
        HttpResponse<String> one = get(memory, "/actuator/sluice/annotated", "e");
        assertThat(one.statusCode()).as(one.body()).isEqualTo(200);
        assertThat(one.body()).contains("\"name\":\"annotated\"");
        assertThat(get(redis, "/actuator/sluice", "e").statusCode()).isEqualTo(404);
    }
}
