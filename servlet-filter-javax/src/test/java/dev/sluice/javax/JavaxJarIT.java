package dev.sluice.javax;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged {@code sluice-servlet-filter-javax} jar (failsafe runs this after {@code package}):
 * the jakarta filter's classes, every one of them, with no {@code jakarta.servlet} reference left,
 * under this artifact's own manifest and Maven metadata.
 */
class JavaxJarIT {

    private static final Path JAVAX_JAR = jar("sluice.test.javax-jar");

    @Test
    void noClassReferencesJakartaServletAnyMore() throws IOException {
        Map<String, List<String>> pools = constantPools(JAVAX_JAR);
        assertThat(pools).isNotEmpty();
        pools.forEach((name, entries) -> assertThat(entries).as(name)
                .noneMatch(e -> e.contains("jakarta/servlet") || e.contains("jakarta.servlet")));
        assertThat(pools.get("dev/sluice/servlet/RateLimitFilter.class"))
                .contains("javax/servlet/Filter", "javax/servlet/FilterChain", "javax/servlet/ServletException",
                        "javax/servlet/http/HttpServletRequest", "javax/servlet/http/HttpServletResponse");
        assertThat(pools.get("dev/sluice/servlet/internal/ServletRequestView.class"))
                .contains("javax/servlet/http/HttpServletRequest");
    }

    @Test
    void everyClassOfTheJakartaJarIsThereAndNothingElse() throws IOException {
        Map<String, List<String>> jakarta = constantPools(JakartaFilterJar.path());
        // The scan above must be able to fail: the input is full of jakarta.servlet references.
        assertThat(jakarta.get("dev/sluice/servlet/RateLimitFilter.class")).contains("jakarta/servlet/Filter");
        assertThat(constantPools(JAVAX_JAR).keySet()).isEqualTo(jakarta.keySet());
    }

    @Test
    void manifestAndMavenMetadataAreThisArtifactsOwn() throws IOException {
        try (JarFile jar = new JarFile(JAVAX_JAR.toFile())) {
            assertThat(jar.getManifest().getMainAttributes().getValue("Automatic-Module-Name"))
                    .isEqualTo("dev.sluice.servlet.javax");
            List<String> names = jar.stream().map(JarEntry::getName).toList();
            assertThat(names).contains("META-INF/maven/dev.sluice/sluice-servlet-filter-javax/pom.xml")
                    .noneMatch(n -> n.startsWith("META-INF/maven/dev.sluice/sluice-servlet-filter/"));
        }
    }

    private static Map<String, List<String>> constantPools(Path path) throws IOException {
        Map<String, List<String>> pools = new TreeMap<>();
        try (JarFile jar = new JarFile(path.toFile())) {
            List<JarEntry> classes = new ArrayList<>();
            jar.stream().filter(e -> e.getName().endsWith(".class")).forEach(classes::add);
            for (JarEntry entry : classes) {
                try (var in = jar.getInputStream(entry)) {
                    pools.put(entry.getName(), ConstantPool.utf8Entries(in.readAllBytes()));
                }
            }
        }
        return pools;
    }

    private static Path jar(String property) {
        String value = System.getProperty(property);
        if (value == null || value.startsWith("${") || !Files.isRegularFile(Path.of(value))) {
            throw new IllegalStateException(property + " does not name a jar (run through Maven's verify): " + value);
        }
        return Path.of(value);
    }
}
