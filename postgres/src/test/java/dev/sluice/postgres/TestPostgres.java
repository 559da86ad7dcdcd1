package dev.sluice.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.nio.file.attribute.UserPrincipalNotFoundException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * A real Postgres server for the tests, on 127.0.0.1 and a free port, in a data directory of its
 * own. Its binaries: {@code PG_BIN} if set, else Debian's ({@code /usr/lib/postgresql/<version>/bin},
 * the newest), else the ones the tests bring from Maven Central ({@link MavenPostgresBinaries}), so a
 * machine with only a JDK runs these tests too; {@code -Dsluice.test.pg-bin=maven} takes the latter
 * even where the others exist. When the tests run as root, the server runs as the {@code postgres}
 * user, or {@code nobody} where there is none (the server refuses root). Trust authentication on
 * loopback, user {@code sluice}, database {@code postgres}. Stops and deletes its directory when the
 * JVM exits. Can be stopped and started again on the same port and data directory. Public for the
 * benchmarks, which start their Postgres with it (this module's test jar).
 */
public final class TestPostgres {

    /** System property: {@code auto} (the default) or {@code maven} (the Maven Central binaries only). */
    static final String CHOICE = "sluice.test.pg-bin";

    private static TestPostgres shared;
    private static final AtomicInteger POOLS = new AtomicInteger();

    private final Path bin;
    private final Path base;
    private final Path data;
    private final int port;
    /** The user the server runs as when the tests run as root; null when they do not. */
    private final String serverUser;
    private boolean destroyed;

    private TestPostgres() {
        this.bin = binaries();
        boolean asRoot = "root".equals(System.getProperty("user.name"));
        try {
            this.base = Files.createTempDirectory("sluice-postgres");
            if (asRoot) {
                UserPrincipal user = serverUser(base);
                this.serverUser = user.getName();
                Files.setOwner(base, user);
            } else {
                this.serverUser = null;
            }
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                this.port = socket.getLocalPort();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        this.data = base.resolve("data");
        // Says in the test's output which server a failure came from.
        System.err.println("TestPostgres: " + bin + (serverUser == null ? "" : ", as " + serverUser)
                + ", port " + port);
        run(bin.resolve("initdb").toString(), "-D", data.toString(), "-U", "sluice", "-A", "trust", "-E", "UTF8",
                "--no-sync");
        start();
        Runtime.getRuntime().addShutdownHook(new Thread(this::destroy, "sluice-test-postgres-stop"));
    }

    /** The server every test of this JVM may share (never stopped by a test). */
    public static synchronized TestPostgres shared() {
        if (shared == null) {
            shared = new TestPostgres();
        }
        return shared;
    }

    /** A server of the caller's own, which it may stop and start. */
    static TestPostgres own() {
        return new TestPostgres();
    }

    /** Starts the server (again) on its port and data directory, and waits until it accepts connections. */
    void start() {
        run(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-l", base.resolve("server.log").toString(),
                "-w", "-t", "60", "-o", "-p " + port + " -k " + base + " -c listen_addresses=127.0.0.1"
                        + " -c fsync=off -c full_page_writes=off -c max_connections=200",
                "start");
    }

    /** Stops the server (fast shutdown: open connections are cut). */
    void stop() {
        run(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "fast", "-w", "-t", "60", "stop");
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    }

    /**
     * A pool of at most {@code size} connections that waits at most 5 s for one (a busy machine
     * may take a while to start a server process) and can be built while the server is down.
     */
    public HikariDataSource pool(int size) {
        return pool(size, null, 5_000);
    }

    /** As {@link #pool(int)}, with {@code schema} as the search path (if not null) and another wait. */
    HikariDataSource pool(int size, String schema, long connectionTimeoutMillis) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        config.setUsername("sluice");
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(connectionTimeoutMillis);
        config.setValidationTimeout(250);
        config.setInitializationFailTimeout(-1);
        config.setPoolName("test-pool-" + POOLS.incrementAndGet());
        if (schema != null) {
            config.setSchema(schema);
        }
        return new HikariDataSource(config);
    }

    /** Stops the server if it runs and deletes its directory; once. */
    synchronized void destroy() {
        if (destroyed) {
            return;
        }
        destroyed = true;
        try {
            stop();
        } catch (RuntimeException ignored) {
            // already stopped
        }
        try (Stream<Path> files = Files.walk(base)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException ignored) {
            // a temporary directory left behind
        }
    }

    private void run(String... command) {
        List<String> full = new ArrayList<>();
        if (serverUser != null) {
            full.addAll(List.of("runuser", "-u", serverUser, "--"));
        }
        full.addAll(Arrays.asList(command));
        try {
            Path log = Files.createTempFile("sluice-postgres-cmd", ".log");
            try {
                Process process = new ProcessBuilder(full).redirectErrorStream(true)
                        .redirectOutput(log.toFile()).start();
                if (!process.waitFor(90, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    throw new IllegalStateException("timed out: " + full + "\n" + Files.readString(log));
                }
                if (process.exitValue() != 0) {
                    Path server = base.resolve("server.log");
                    throw new IllegalStateException("failed (" + process.exitValue() + "): " + full + "\n"
                            + Files.readString(log) + (Files.exists(server) ? Files.readString(server) : ""));
                }
            } finally {
                Files.deleteIfExists(log);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + full, e);
        }
    }

    private static Path binaries() {
        String choice = System.getProperty(CHOICE, "auto");
        if ("maven".equals(choice)) {
            return MavenPostgresBinaries.bin();
        }
        if (!"auto".equals(choice)) {
            throw new IllegalStateException(CHOICE + " must be auto or maven, got '" + choice + "'");
        }
        String given = System.getenv("PG_BIN");
        if (given != null && !given.isBlank()) {
            return Path.of(given);
        }
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (Stream<Path> versions = Files.list(debian)) {
                Path newest = versions.filter(v -> Files.isExecutable(v.resolve("bin/postgres")))
                        .max(Comparator.comparingInt(v -> version(v.getFileName().toString())))
                        .orElse(null);
                if (newest != null) {
                    return newest.resolve("bin");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        // Slower the first time (about 15 MB to unpack), and needs no package installed.
        return MavenPostgresBinaries.bin();
    }

    /** The server refuses to run as root: the postgres user if the machine has one, else nobody. */
    private static UserPrincipal serverUser(Path anyPath) throws IOException {
        UserPrincipalLookupService users = anyPath.getFileSystem().getUserPrincipalLookupService();
        for (String name : List.of("postgres", "nobody")) {
            try {
                return users.lookupPrincipalByName(name);
            } catch (UserPrincipalNotFoundException e) {
                // try the next
            }
        }
        throw new IllegalStateException("the Postgres tests run as root, and the server refuses root: they run it "
                + "as the user postgres or nobody, and this machine has neither; add one (useradd postgres) or "
                + "run the tests as another user");
    }

    private static int version(String name) {
        try {
            return Integer.parseInt(name);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
