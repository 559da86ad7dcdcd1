package dev.sluice.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real Redis Cluster of three masters on loopback, from the embedded redis-server binary, wired
 * with CLUSTER ADDSLOTS and CLUSTER MEET.
 */
public final class TestCluster implements AutoCloseable {

    private final List<TestRedis> nodes = new ArrayList<>();
    private final List<Integer> ports = new ArrayList<>();

    public TestCluster(int masters) {
        try {
            Path dir = Files.createTempDirectory("sluice-cluster");
            for (int i = 0; i < masters; i++) {
                int port = freeNodePort();
                nodes.add(TestRedis.start(port, "cluster-enabled yes", "cluster-config-file nodes-" + port + ".conf",
                        "dir " + dir.toAbsolutePath(), "cluster-node-timeout 5000"));
                ports.add(port);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int per = 16384 / masters;
        for (int i = 0; i < masters; i++) {
            int from = i * per;
            int to = i == masters - 1 ? 16383 : from + per - 1;
            String[] args = new String[2 + to - from + 1];
            args[0] = "CLUSTER";
            args[1] = "ADDSLOTS";
            for (int slot = from; slot <= to; slot++) {
                args[2 + slot - from] = Integer.toString(slot);
            }
            Resp.call(ports.get(i), args);
        }
        for (int i = 1; i < masters; i++) {
            Resp.call(ports.get(0), "CLUSTER", "MEET", "127.0.0.1", Integer.toString(ports.get(i)));
        }
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!ready()) {
            if (System.nanoTime() > deadline) {
                close();
                throw new IllegalStateException("the cluster did not become ready in 30 s");
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    private boolean ready() {
        for (int port : ports) {
            String info = (String) Resp.call(port, "CLUSTER", "INFO");
            if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + ports.size())) {
                return false;
            }
        }
        return true;
    }

    /**
     * A free loopback port whose cluster bus port (the port plus 10,000) is free too: a node whose
     * bus port another process holds does not start, which failed a test now and then on a busy
     * machine. At most 50 tries, then the last free port anyway.
     */
    private static int freeNodePort() {
        int port = TestRedis.freePort();
        for (int i = 0; i < 50 && !(port + 10_000 <= 65_535 && free(port + 10_000)); i++) {
            port = TestRedis.freePort();
        }
        return port;
    }

    private static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    public List<Integer> ports() {
        return ports;
    }

    /** A Redisson YAML configuration naming every node. */
    public Path redissonYaml() {
        StringBuilder config = new StringBuilder("clusterServersConfig:\n  nodeAddresses:\n");
        for (int port : ports) {
            config.append("  - \"redis://127.0.0.1:").append(port).append("\"\n");
        }
        try {
            Path yaml = Files.createTempFile("sluice-cluster", ".yaml");
            Files.writeString(yaml, config);
            return yaml;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        nodes.forEach(TestRedis::stop);
    }
}
