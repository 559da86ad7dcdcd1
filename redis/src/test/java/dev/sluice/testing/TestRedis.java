package dev.sluice.testing;

import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;
import redis.embedded.RedisServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * A real Redis server for tests: the one {@code REDIS_URL} names, or else a {@code redis-server}
 * from the embedded-redis package, started once per JVM on a free loopback port and stopped at
 * exit. Never a mock.
 */
public final class TestRedis {

    private static TestRedis shared;

    private final String url;
    private final RedisServer server;

    private TestRedis(String url, RedisServer server) {
        this.url = url;
        this.server = server;
    }

    /** The Redis of this test JVM, started on first use. */
    public static synchronized TestRedis shared() {
        if (shared == null) {
            String env = System.getenv("REDIS_URL");
            shared = env != null && !env.isBlank() ? new TestRedis(env.trim(), null) : start();
        }
        return shared;
    }

    /** A new embedded Redis server on a free loopback port, with the given extra settings. */
    public static TestRedis start(String... settings) {
        return start(freePort(), settings);
    }

    /** A new embedded Redis server on a given loopback port, with the given extra settings. */
    public static TestRedis start(int port, String... settings) {
        try {
            var builder = RedisServer.newRedisServer().port(port).bind("127.0.0.1").setting("save \"\"")
                    .setting("appendonly no");
            for (String setting : settings) {
                builder.setting(setting);
            }
            RedisServer server = builder.build();
            server.start();
            TestRedis redis = new TestRedis("redis://127.0.0.1:" + port, server);
            Runtime.getRuntime().addShutdownHook(new Thread(redis::stop));
            return redis;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded redis-server on port " + port, e);
        }
    }

    /** A free TCP port on loopback. */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The port of an embedded server. */
    public int port() {
        return Integer.parseInt(url.substring(url.lastIndexOf(':') + 1));
    }

    /** The URL, {@code redis://127.0.0.1:port}. */
    public String url() {
        return url;
    }

    /** Whether this server was started by the tests (and so may be stopped and restarted). */
    public boolean embedded() {
        return server != null;
    }

    /** Stops an embedded server; the external one of {@code REDIS_URL} is left alone. */
    public void stop() {
        if (server != null && server.isActive()) {
            try {
                server.stop();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** Starts an embedded server again after {@link #stop()}, on the same port. */
    public void restart() {
        if (server != null && !server.isActive()) {
            try {
                server.start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /** A new Redisson client of this server; the caller shuts it down. */
    public RedissonClient newClient() {
        return client(url);
    }

    /** A new Redisson client of the Redis at {@code url}; the caller shuts it down. */
    public static RedissonClient client(String url) {
        Config config = new Config();
        config.useSingleServer().setAddress(url).setConnectionMinimumIdleSize(2).setConnectionPoolSize(16)
                .setSubscriptionConnectionMinimumIdleSize(0).setSubscriptionConnectionPoolSize(1);
        config.setCodec(StringCodec.INSTANCE);
        return Redisson.create(config);
    }

    /** Every key under Sluice's prefix. */
    public static List<String> sluiceKeys(RedissonClient client) {
        List<String> keys = new ArrayList<>();
        client.getKeys().getKeysByPattern("sluice:*").forEach(keys::add);
        return keys;
    }
}
