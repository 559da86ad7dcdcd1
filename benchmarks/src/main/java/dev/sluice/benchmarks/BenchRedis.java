package dev.sluice.benchmarks;

import dev.sluice.internal.Secrets;
import dev.sluice.redis.RedisStore;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;
import redis.embedded.RedisServer;
import redis.embedded.core.RedisServerBuilder;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The one Redis every Redis benchmark of a run talks to.
 *
 * <p>The launcher ({@link Main}) resolves it once and hands the URL to every forked benchmark JVM
 * in the system property {@value #URL_PROPERTY}, so all contenders of a run meet the same server.
 * The URL is the first of: that property, the {@code REDIS_URL} environment variable, or a
 * {@code redis-server} from the embedded-redis package (a 6.2 binary; {@value #SERVER_PROPERTY}
 * names another binary to start instead, e.g. a Redis 7's), started on a free loopback port and
 * stopped when the JVM that started it exits. A URL with a password is refused, from
 * either source ({@link #withoutSecrets}). A server this run started may be flushed
 * between trials ({@link #owned()}); one named by {@code REDIS_URL} is never flushed.
 */
public final class BenchRedis {

    /** System property carrying the URL from the launcher to the forked JVMs. */
    public static final String URL_PROPERTY = "sluice.bench.redis";
    /** System property telling forked JVMs that the launcher started the server (so it may be flushed). */
    public static final String OWNED_PROPERTY = "sluice.bench.redis.owned";

    /**
     * System property naming a {@code redis-server} binary the launcher starts instead of the
     * embedded 6.2 one (to measure on the Redis version an application runs, e.g. 7 with functions).
     */
    public static final String SERVER_PROPERTY = "sluice.bench.redis-server";

    private static BenchRedis current;

    private final String url;
    private final boolean owned;
    private final RedisServer server;

    private BenchRedis(String url, boolean owned, RedisServer server) {
        this.url = url;
        this.owned = owned;
        this.server = server;
    }

    /** The Redis of this JVM: the launcher's, {@code REDIS_URL}'s, or a new embedded one. */
    public static synchronized BenchRedis get() {
        if (current == null) {
            String property = System.getProperty(URL_PROPERTY);
            String env = System.getenv("REDIS_URL");
            if (property != null && !property.isBlank()) {
                current = new BenchRedis(withoutSecrets("-D" + URL_PROPERTY, property.trim()),
                        Boolean.getBoolean(OWNED_PROPERTY), null);
            } else if (env != null && !env.isBlank()) {
                current = new BenchRedis(withoutSecrets("REDIS_URL", env.trim()), false, null);
            } else {
                current = startEmbedded();
            }
        }
        return current;
    }

    /**
     * {@code url}, refused if it carries a password or a user name, from either source: the
     * launcher hands the URL to every forked JVM on its command line, which JMH prints ("VM
     * options"), and the harness's own commands (INFO, FLUSHALL) and {@code redis-benchmark} do not
     * authenticate. The message names the {@code source} and shows the URL redacted.
     *
     * @throws IllegalArgumentException naming {@code source}, if {@code url} carries a secret
     */
    static String withoutSecrets(String source, String url) {
        String shown = Secrets.redact(url);
        if (!shown.equals(url)) {
            throw new IllegalArgumentException(source + " '" + shown + "' carries a password: the benchmarks run only "
                    + "against a Redis without one (they would pass it to forked JVMs on command lines that JMH "
                    + "prints); point it at an unprotected Redis on loopback, or unset it to use the embedded one");
        }
        return url;
    }

    private static BenchRedis startEmbedded() {
        int port = freePort();
        try {
            // No persistence: a benchmark must not measure fsync or RDB forks.
            RedisServerBuilder builder = RedisServer.newRedisServer().port(port).bind("127.0.0.1")
                    .setting("save \"\"").setting("appendonly no");
            String binary = System.getProperty(SERVER_PROPERTY);
            if (binary != null && !binary.isBlank()) {
                File file = new File(binary.trim());
                if (!file.canExecute()) {
                    throw new IllegalArgumentException("-D" + SERVER_PROPERTY + "='" + binary
                            + "' is not an executable redis-server");
                }
                builder.executableProvider(() -> file);
            }
            RedisServer server = builder.build();
            server.start();
            BenchRedis redis = new BenchRedis("redis://127.0.0.1:" + port, true, server);
            Runtime.getRuntime().addShutdownHook(new Thread(redis::stop));
            return redis;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded redis-server on port " + port, e);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The command that runs {@code main} with {@code args} in a new JVM on this Redis: this JVM's
     * {@code java}, its arguments (as JMH gives its forks) and class path, the URL in
     * {@value #URL_PROPERTY}, logging at warn.
     */
    List<String> newJvm(Class<?> main, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.add("-D" + URL_PROPERTY + "=" + url);
        command.add("-D" + OWNED_PROPERTY + "=" + owned);
        command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        return command;
    }

    /** {@code redis://host:port}. */
    public String url() {
        return url;
    }

    /** Whether this run started the server, so flushing it between trials harms no one. */
    public boolean owned() {
        return owned;
    }

    /**
     * Whether the server answers PING; if this run started it and it is gone (it died once
     * mid-run on a shared machine; the cause was not found), starts it again on the same port, empty.
     *
     * @return false if it was down (and was restarted, when owned)
     */
    public boolean ensureAlive() {
        try {
            command("PING");
            return true;
        } catch (UncheckedIOException e) {
            if (server == null) {
                throw e;
            }
            try {
                if (server.isActive()) {
                    server.stop();
                }
            } catch (IOException | RuntimeException ignored) {
                // the process is already gone; start() below is what matters
            }
            try {
                server.start();
            } catch (IOException restart) {
                throw new UncheckedIOException("the embedded redis-server died and could not be restarted", restart);
            }
            return false;
        }
    }

    void stop() {
        if (server != null && server.isActive()) {
            try {
                server.stop();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * A new Redisson client with the settings Sluice's own {@code RedisStore.connect} uses
     * (no retries, Redisson's default pool of 64 connections), so every contender runs on the
     * same client configuration; the response timeout is 5 s instead of 1 s and the connect
     * timeout 10 s, because on a loaded 2-core machine even a loopback PING sometimes took longer
     * than a second, and a benchmark should measure slow answers, not fail on them. The caller
     * shuts it down.
     *
     * <p>Redisson's 32 Netty event loops are kept (what a user gets): with 4 (Netty's own default
     * on 2 cores) a plain 16-thread {@code evalSha} loop ran about twice as fast on a loaded
     * 2-core machine, but the floor's async decisions (256 in flight over a pool of 64) ran 5 to
     * 10 times slower, so no one setting favours every contender (issue 26, docs/benchmarks.md).
     */
    public RedissonClient newClient() {
        Config config = RedisStore.config(url);
        config.setCodec(StringCodec.INSTANCE);
        config.useSingleServer().setTimeout(5_000).setConnectTimeout(10_000);
        return Redisson.create(config);
    }

    /**
     * Sends one command on a fresh plain socket and returns the raw reply. Used outside the
     * measured code (INFO, MEMORY USAGE, FLUSHALL), so no client library's behaviour is counted.
     */
    public String command(String... args) {
        URI uri = URI.create(url);
        try (Socket socket = new Socket(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(Resp.encode(args));
            out.flush();
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            return Resp.readReply(in);
        } catch (IOException e) {
            throw new UncheckedIOException("Redis at " + url + " did not answer " + args[0], e);
        }
    }

    /** Deletes everything, but only on a server this run started. */
    public void flushIfOwned() {
        if (owned) {
            command("FLUSHALL");
        }
    }
}
