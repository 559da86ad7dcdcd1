package dev.sluice.javax;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The jakarta {@code sluice-servlet-filter} jar (the transformation's input), kept off the test
 * class path because its classes have the same names as the transformed ones. Its
 * {@code dev.sluice.servlet} classes are loaded child-first from the jar; everything else
 * (sluice-core, jakarta.servlet, Jetty) comes from the test class path.
 */
final class JakartaFilterJar extends URLClassLoader {

    private static final String PACKAGE = "dev.sluice.servlet.";

    static {
        registerAsParallelCapable();
    }

    private JakartaFilterJar(Path jar) throws IOException {
        super(new URL[] {jar.toUri().toURL()}, JakartaFilterJar.class.getClassLoader());
    }

    /** The jar the build names in the system property {@code sluice.test.jakarta-jar} (see the pom). */
    static Path path() {
        String property = System.getProperty("sluice.test.jakarta-jar");
        if (property == null || property.isBlank() || property.startsWith("${")) {
            throw new IllegalStateException("sluice.test.jakarta-jar is not set (run the tests through Maven): "
                    + property);
        }
        Path jar = Path.of(property);
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("sluice.test.jakarta-jar is not a file: " + jar);
        }
        return jar;
    }

    static JakartaFilterJar open() {
        try {
            return new JakartaFilterJar(path());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (!name.startsWith(PACKAGE)) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> loaded = findLoadedClass(name);
            if (loaded == null) {
                loaded = findClass(name);
            }
            if (resolve) {
                resolveClass(loaded);
            }
            return loaded;
        }
    }
}
