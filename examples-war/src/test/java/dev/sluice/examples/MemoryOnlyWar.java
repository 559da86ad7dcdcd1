package dev.sluice.examples;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * The examples WAR as a memory-only application would ship it: the packaged WAR unpacked into a
 * temporary directory without the Redis store and what only it needs, plus the class files
 * {@link MemoryOnlyIT} adds ({@link MemoryOnlyProbe} in {@code WEB-INF/classes}, and
 * {@link MemoryOnlyServer} in a directory of its own for the container's class path). Closing
 * deletes both directories.
 */
final class MemoryOnlyWar implements AutoCloseable {

    /**
     * The {@code WEB-INF/lib} jars left out, by name prefix: sluice-redis, Redisson, netty, and
     * Redisson's other dependencies (from its POM), which nothing else in the WAR uses.
     */
    static final List<String> REDIS_ONLY = List.of("sluice-redis-", "redisson-", "netty-",
            "cache-api-", "reactor-core-", "reactive-streams-", "rxjava-", "kryo-", "minlog-", "reflectasm-",
            "objenesis-", "snakeyaml-", "byte-buddy-", "jodd-util-");

    private final Path root;
    final Path webapp;
    final Path launcher;
    /** The jars left out, by file name. */
    final List<String> removed;

    private MemoryOnlyWar(Path root, List<String> removed) {
        this.root = root;
        this.webapp = root.resolve("webapp");
        this.launcher = root.resolve("launcher");
        this.removed = List.copyOf(removed);
    }

    static MemoryOnlyWar unpack(Path war) throws IOException {
        Path root = Files.createTempDirectory("sluice-memory-only");
        List<String> removed = new ArrayList<>();
        try (ZipFile zip = new ZipFile(war.toFile())) {
            for (ZipEntry entry : zip.stream().toList()) {
                String name = entry.getName();
                if (name.startsWith("WEB-INF/lib/") && isRedisOnly(name.substring("WEB-INF/lib/".length()))) {
                    removed.add(name.substring("WEB-INF/lib/".length()));
                    continue;
                }
                Path target = root.resolve("webapp").resolve(name).normalize();
                if (!target.startsWith(root.resolve("webapp"))) {
                    throw new IOException("entry outside the WAR: " + name);
                }
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                } else {
                    Files.createDirectories(target.getParent());
                    try (InputStream in = zip.getInputStream(entry)) {
                        Files.copy(in, target);
                    }
                }
            }
        }
        copyClasses(MemoryOnlyProbe.class, root.resolve("webapp/WEB-INF/classes"));
        copyClasses(MemoryOnlyServer.class, root.resolve("launcher"));
        copyClasses(DemoRealm.class, root.resolve("launcher"));
        return new MemoryOnlyWar(root, removed);
    }

    private static boolean isRedisOnly(String jar) {
        return REDIS_ONLY.stream().anyMatch(jar::startsWith);
    }

    /** Copies a top-level class of the test classes, and its nested ones, under {@code dir}. */
    private static void copyClasses(Class<?> type, Path dir) throws IOException {
        Path classes;
        try {
            classes = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        String file = type.getName().replace('.', '/');
        Path source = classes.resolve(file).getParent();
        Path target = dir.resolve(file).getParent();
        Files.createDirectories(target);
        try (Stream<Path> files = Files.list(source)) {
            for (Path f : files.toList()) {
                String name = f.getFileName().toString();
                if (name.equals(type.getSimpleName() + ".class") || name.startsWith(type.getSimpleName() + "$")) {
                    Files.copy(f, target.resolve(name));
                }
            }
        }
    }

    @Override
    public void close() {
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
