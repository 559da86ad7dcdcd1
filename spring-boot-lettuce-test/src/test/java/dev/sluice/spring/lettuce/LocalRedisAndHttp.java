package dev.sluice.spring.lettuce;

import redis.embedded.RedisServer;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** This module's test fixtures: an embedded Redis on a free loopback port, and a GET over real HTTP. */
final class LocalRedisAndHttp {

    private LocalRedisAndHttp() {
    }

    /** A free port on loopback. */
    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** A started embedded Redis on {@code 127.0.0.1:port}, which keeps nothing on disk. */
    static RedisServer startRedis(int port) throws IOException {
        RedisServer server = RedisServer.newRedisServer().port(port).bind("127.0.0.1").setting("save \"\"")
                .setting("appendonly no").build();
        server.start();
        return server;
    }

    /**
     * {@code GET path} on {@code 127.0.0.1:port}, on a connection of its own: Reactor Netty 1.3.6,
     * Boot's, can stop reading a kept-alive one.
     */
    static HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
