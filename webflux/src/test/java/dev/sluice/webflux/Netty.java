package dev.sluice.webflux;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A WebFlux application on Reactor Netty, on 127.0.0.1 and a free port, behind the given filters
 * (in their order). Paths:
 * <ul>
 *   <li>{@code .../hang}: never answers (until the client goes away), counting its start per
 *       {@code X-Client};
 *   <li>{@code .../block}: sleeps on the thread that runs it (an event loop: BlockHound fails it);
 *   <li>{@code .../status/NNN}: answers status NNN;
 *   <li>anything else: 200 {@code text/plain} "ok", with the request attribute
 *       {@code dev.sluice.outcome} in the header {@code X-Outcome}.
 * </ul>
 */
final class Netty implements AutoCloseable {

    /** Requests of {@code .../hang} started, per {@code X-Client}. */
    static final Map<String, AtomicInteger> HANGING = new ConcurrentHashMap<>();

    private final DisposableServer server;

    Netty(List<WebFilter> filters) {
        // Codecs made here, at start-up: made lazily, they would read a file on the first request's event loop.
        HttpHandler handler = WebHttpHandlerBuilder.webHandler(Netty::handle)
                .codecConfigurer(ServerCodecConfigurer.create()).filters(list -> list.addAll(filters)).build();
        server = HttpServer.create().host("127.0.0.1").port(0).handle(new ReactorHttpHandlerAdapter(handler))
                .bindNow();
    }

    private static Mono<Void> handle(ServerWebExchange exchange) {
        String path = exchange.getRequest().getPath().value();
        ServerHttpResponse response = exchange.getResponse();
        if (path.endsWith("/hang")) {
            String client = exchange.getRequest().getHeaders().getFirst("X-Client");
            HANGING.computeIfAbsent(String.valueOf(client), c -> new AtomicInteger()).incrementAndGet();
            return Mono.never();
        }
        if (path.endsWith("/block")) {
            return Mono.fromRunnable(() -> {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }).then(ok(exchange));
        }
        int status = path.lastIndexOf("/status/");
        if (status >= 0) {
            int code = Integer.parseInt(path.substring(status + "/status/".length()));
            response.setStatusCode(HttpStatusCode.valueOf(code));
            return response.setComplete();
        }
        return ok(exchange);
    }

    private static Mono<Void> ok(ServerWebExchange exchange) {
        ServerHttpResponse response = exchange.getResponse();
        Object outcome = exchange.getAttribute("dev.sluice.outcome");
        if (outcome != null) {
            response.getHeaders().set("X-Outcome", outcome.toString());
        }
        response.getHeaders().setContentType(MediaType.TEXT_PLAIN);
        DataBuffer body = response.bufferFactory().wrap("ok".getBytes(StandardCharsets.UTF_8));
        return response.writeWith(Mono.just(body));
    }

    int port() {
        return server.port();
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + server.port() + path);
    }

    @Override
    public void close() {
        server.disposeNow();
    }
}
