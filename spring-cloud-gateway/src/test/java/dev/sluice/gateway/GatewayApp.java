package dev.sluice.gateway;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A gateway as an application builds one: Spring Boot, Netty on a random loopback port, the
 * routes of {@code application.yml} (in front of {@code backend.uri}), and a {@link KeyResolver}
 * of its own, {@code clientKey}: the {@code X-Client} header.
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class GatewayApp {

    @Bean
    KeyResolver clientKey() {
        return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Client"))
                .filter(client -> !client.isBlank());
    }

    /**
     * Starts a gateway with {@code properties} ({@code name=value}) over {@code application.yml}'s,
     * as command-line arguments.
     */
    static ConfigurableApplicationContext start(Class<?>[] sources, String... properties) {
        List<String> all = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
                "spring.main.banner-mode=off"));
        all.addAll(List.of(properties));
        return new SpringApplicationBuilder(sources).run(all.stream().map(p -> "--" + p).toArray(String[]::new));
    }

    static ConfigurableApplicationContext start(String... properties) {
        return start(new Class<?>[] {GatewayApp.class}, properties);
    }

    static int port(ConfigurableApplicationContext gateway) {
        return Integer.parseInt(gateway.getEnvironment().getProperty("local.server.port"));
    }

    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** GET {@code path} from the gateway as client {@code client} ({@code null}: no {@code X-Client}). */
    static HttpResponse<String> get(ConfigurableApplicationContext gateway, String path, String client) {
        try {
            return CLIENT.send(request(port(gateway), path, client), HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static HttpClient client() {
        return CLIENT;
    }

    static HttpRequest request(int port, String path, String client) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).GET();
        return client == null ? request.build() : request.header("X-Client", client).build();
    }
}
