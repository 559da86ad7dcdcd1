package dev.sluice.testing;

import redis.embedded.Redis;
import redis.embedded.RedisSentinel;
import redis.embedded.RedisServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * A real Redis Sentinel deployment on loopback, from the embedded redis-server binary: a master, one
 * replica ({@code replicaof}) and three sentinels (the same binary with {@code --sentinel}) that
 * monitor the master as {@value #MASTER_NAME} with quorum 2, declare it down after 1 s and fail
 * over to the replica. The constructor returns once the replica is in sync and every sentinel knows
 * the master, the replica and the other sentinels, so a failover can start at once.
 */
public final class TestSentinel implements AutoCloseable {

    public static final String MASTER_NAME = "mymaster";
    private static final int SENTINELS = 3;
    private static final int QUORUM = 2;
    private static final long DOWN_AFTER_MILLIS = 1_000;
    private static final long FAILOVER_TIMEOUT_MILLIS = 5_000;

    private final Path dir;
    private final Map<Integer, RedisServer> servers = new LinkedHashMap<>();
    private final List<RedisSentinel> sentinels = new ArrayList<>();
    private final List<Integer> sentinelPorts = new ArrayList<>();

    public TestSentinel() {
        try {
            dir = Files.createTempDirectory("sluice-sentinel");
            Runtime.getRuntime().addShutdownHook(new Thread(this::close));
            int masterPort = TestRedis.freePort();
            startServer(masterPort);
            int replicaPort = TestRedis.freePort();
            startServer(replicaPort, "replicaof 127.0.0.1 " + masterPort);
            await(Duration.ofSeconds(20),
                    "the replica on port " + replicaPort + " to finish its first sync with the master",
                    () -> info(replicaPort).contains("master_link_status:up")
                            && info(masterPort).contains("connected_slaves:1"));
            for (int i = 0; i < SENTINELS; i++) {
                startSentinel(masterPort);
            }
            await(Duration.ofSeconds(30), "every sentinel to see the master, the replica and the other sentinels",
                    () -> sentinelPorts.stream().allMatch(port -> knowsEverything(port, masterPort)));
        } catch (IOException e) {
            close();
            throw new UncheckedIOException("could not start the sentinel deployment", e);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private void startServer(int port, String... settings) throws IOException {
        var builder = RedisServer.newRedisServer().port(port).bind("127.0.0.1").setting("save \"\"")
                .setting("appendonly no").setting("dir " + dir.toAbsolutePath())
                .setting("dbfilename dump-" + port + ".rdb")
                .setting("replica-announce-ip 127.0.0.1").onShutdownForceStop(true); // stop() is kill -9
        for (String setting : settings) {
            builder.setting(setting);
        }
        RedisServer server = builder.build();
        servers.put(port, server);
        server.start();
    }

    private void startSentinel(int masterPort) throws IOException {
        int port = TestRedis.freePort();
        Path conf = dir.resolve("sentinel-" + port + ".conf"); // a sentinel rewrites its own file: one each
        Files.writeString(conf, String.join("\n",
                "bind 127.0.0.1",
                "dir " + dir.toAbsolutePath(),
                "sentinel announce-ip 127.0.0.1",
                "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + masterPort + " " + QUORUM,
                "sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER_MILLIS,
                "sentinel failover-timeout " + MASTER_NAME + " " + FAILOVER_TIMEOUT_MILLIS,
                "sentinel parallel-syncs " + MASTER_NAME + " 1",
                ""));
        RedisSentinel sentinel = RedisSentinel.newRedisSentinel().port(port)
                .configFile(conf.toAbsolutePath().toString())
                .onShutdownForceStop(true).build();
        sentinels.add(sentinel);
        sentinelPorts.add(port);
        sentinel.start();
    }

    /** Whether the sentinel on {@code port} sees the master up, the replica up and every other sentinel. */
    private static boolean knowsEverything(int port, int masterPort) {
        Map<String, String> master = fields(Resp.call(port, "SENTINEL", "MASTER", MASTER_NAME));
        if (!Integer.toString(masterPort).equals(master.get("port")) || !"master".equals(master.get("flags"))) {
            return false;
        }
        List<?> replicas = (List<?>) Resp.call(port, "SENTINEL", "REPLICAS", MASTER_NAME);
        List<?> others = (List<?>) Resp.call(port, "SENTINEL", "SENTINELS", MASTER_NAME);
        return replicas.size() == 1 && "slave".equals(fields(replicas.get(0)).get("flags"))
                && others.size() == SENTINELS - 1
                && others.stream().allMatch(other -> "sentinel".equals(fields(other).get("flags")));
    }

    /** A flat RESP array of field, value, field, value, ... as a map. */
    private static Map<String, String> fields(Object reply) {
        List<?> flat = (List<?>) reply;
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            map.put(String.valueOf(flat.get(i)), String.valueOf(flat.get(i + 1)));
        }
        return map;
    }

    /** {@code INFO replication} of the server on {@code port}. */
    public static String info(int port) {
        return (String) Resp.call(port, "INFO", "replication");
    }

    private static long infoField(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).trim());
            }
        }
        throw new IllegalStateException("no " + field + " in INFO replication: " + info);
    }

    /** The master's port, as the first sentinel that answers reports it. */
    public int masterPort() {
        RuntimeException last = null;
        for (int port : sentinelPorts) {
            try {
                List<?> address = (List<?>) Resp.call(port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
                return Integer.parseInt((String) address.get(1));
            } catch (RuntimeException e) {
                last = e;
            }
        }
        throw new IllegalStateException("no sentinel answered GET-MASTER-ADDR-BY-NAME", last);
    }

    /** The port of the server that is not {@code port}: the replica, given the master. */
    public int otherServer(int port) {
        return servers.keySet().stream().filter(p -> p != port).findFirst().orElseThrow();
    }

    /**
     * Waits until the replica has received every write the master had made when this was called:
     * its {@code slave_repl_offset} reaches the master's {@code master_repl_offset}.
     */
    public void awaitReplicaInSync(Duration within) {
        int master = masterPort();
        int replica = otherServer(master);
        long target = infoField(info(master), "master_repl_offset");
        await(within, "the replica on port " + replica + " to reach the master's replication offset " + target,
                () -> info(replica).contains("master_link_status:up")
                        && infoField(info(replica), "slave_repl_offset") >= target);
    }

    /** Kills the server on {@code port} (SIGKILL) and waits until its port refuses connections. */
    public void kill(int port) {
        try {
            servers.get(port).stop();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        await(Duration.ofSeconds(10), "the killed server's port " + port + " to refuse connections", () -> {
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return false;
            } catch (IOException refused) {
                return true;
            }
        });
    }

    /**
     * Waits until every sentinel names {@code port} as the master and that server says it is one.
     */
    public void awaitMaster(int port, Duration within) {
        await(within, "the sentinels to promote the server on port " + port + " to master", () -> {
            for (int sentinel : sentinelPorts) {
                List<?> address = (List<?>) Resp.call(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
                if (!Integer.toString(port).equals(address.get(1))) {
                    return false;
                }
            }
            return info(port).contains("role:master");
        });
    }

    /** A Redisson YAML configuration naming the three sentinels, with the given extra lines (indented by two). */
    public Path redissonYaml(String... settings) {
        StringBuilder config = new StringBuilder("sentinelServersConfig:\n  masterName: \"" + MASTER_NAME + "\"\n");
        for (String setting : settings) {
            config.append("  ").append(setting).append('\n');
        }
        config.append("  sentinelAddresses:\n");
        for (int port : sentinelPorts) {
            config.append("  - \"redis://127.0.0.1:").append(port).append("\"\n");
        }
        try {
            Path yaml = Files.createTempFile(dir, "redisson-sentinel", ".yaml");
            Files.writeString(yaml, config);
            return yaml;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Polls {@code condition} every 100 ms (a failing probe counts as false) until it holds or {@code within} passes.
     */
    public static void await(Duration within, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + within.toNanos();
        RuntimeException lastError = null;
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
                lastError = null;
            } catch (RuntimeException e) {
                lastError = e;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + within.toMillis() + " ms waiting for " + what,
                        lastError);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what, e);
            }
        }
    }

    @Override
    public synchronized void close() {
        for (RedisSentinel sentinel : sentinels) {
            stopQuietly(sentinel);
        }
        for (RedisServer server : servers.values()) {
            stopQuietly(server);
        }
    }

    private static void stopQuietly(Redis redis) {
        try {
            redis.stop();
        } catch (IOException | RuntimeException ignored) {
            // already gone
        }
    }
}
