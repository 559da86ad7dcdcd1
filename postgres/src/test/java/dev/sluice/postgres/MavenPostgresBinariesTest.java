package dev.sluice.postgres;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The binaries a machine without Postgres gets: unpacked whole, once, and usable by others. */
class MavenPostgresBinariesTest {

    @TempDir
    Path tmp;

    @Test
    void twoUnpackingAtOnceLeaveOneWorkingCopyAndNothingHalfDone() throws Exception {
        URL archive = MavenPostgresBinaries.archive();
        Path home = tmp.resolve("binaries");
        Callable<Void> unpack = () -> {
            MavenPostgresBinaries.unpack(archive, home);
            return null;
        };
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            List<Future<Void>> both = threads.invokeAll(List.of(unpack, unpack), 180, TimeUnit.SECONDS);
            for (Future<Void> one : both) {
                one.get();
            }
        } finally {
            threads.shutdownNow();
        }

        try (Stream<Path> left = Files.list(tmp)) {
            assertThat(left).containsExactly(home);
        }
        for (String program : List.of("initdb", "pg_ctl", "postgres")) {
            Path file = home.resolve("bin").resolve(program);
            // As root the server runs as another user: it must be able to read and run them.
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rwxr-xr-x");
        }
        assertThat(Files.isSymbolicLink(home.resolve("lib/libpq.so.5"))).isTrue();
        assertThat(home.resolve("lib/libpq.so.5")).isRegularFile();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(home.resolve("lib"))))
                .isEqualTo("rwxr-xr-x");
        assertThat(version(home.resolve("bin/postgres"))).startsWith("postgres (PostgreSQL) 16.");
    }

    @Test
    void aCopyOthersCouldHaveWrittenIsRefused() throws IOException {
        Path home = Files.createDirectory(tmp.resolve("binaries"));
        Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxrwxrwx"));

        assertThatThrownBy(() -> MavenPostgresBinaries.checkOwner(home))
                .hasMessageContaining(home.toString())
                .hasMessageContaining("rwxrwxrwx");

        Files.setPosixFilePermissions(home, PosixFilePermissions.fromString("rwxr-xr-x"));
        MavenPostgresBinaries.checkOwner(home);
    }

    private static String version(Path postgres) throws Exception {
        Process process = new ProcessBuilder(postgres.toString(), "--version").redirectErrorStream(true).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(out).isZero();
        return out.strip();
    }
}
