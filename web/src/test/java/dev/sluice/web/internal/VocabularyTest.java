package dev.sluice.web.internal;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every parameter the parsers know is documented where users look: README's configuration
 * reference, the servlet filter's init-params, the JAX-RS properties and annotation attributes.
 * Reads the sources from the source tree (the working directory is this module's).
 */
class VocabularyTest {

    private static final Path ROOT = Path.of("..");

    private static String read(String path) throws IOException {
        return Files.readString(ROOT.resolve(path));
    }

    /** The Javadoc comment right before {@code declaration}. */
    private static String javadocBefore(String source, String declaration) {
        int end = source.indexOf(declaration);
        assertThat(end).as(declaration).isPositive();
        return source.substring(source.lastIndexOf("/**", end), end);
    }

    /**
     * The annotation attribute of a route parameter: its name in camel case, except
     * {@code tier-limits}, which {@code @RateLimit} spells {@code tiers = {"premium:1000/1h"}}.
     */
    private static String attributeName(String configName) {
        if (configName.equals(Parameter.TIER_LIMITS.configName())) {
            return "tiers";
        }
        return Pattern.compile("-(\\w)").matcher(configName).replaceAll(m -> m.group(1).toUpperCase());
    }

    @Test
    void readmeTableHasARowPerParameter() throws IOException {
        String readme = read("README.md");
        String table = readme.substring(readme.indexOf("## Configuration reference"));
        table = table.substring(0, table.indexOf("\n## "));
        for (Parameter parameter : Parameter.values()) {
            assertThat(table).as("README row of " + parameter).contains("\n| `" + parameter.configName() + "` |");
        }
    }

    @Test
    void theFilterJavadocListsEveryInitParam() throws IOException {
        String doc = javadocBefore(read("servlet-filter/src/main/java/dev/sluice/servlet/RateLimitFilter.java"),
                "public final class RateLimitFilter");
        for (Parameter parameter : Parameter.values()) {
            assertThat(doc).as("init-param " + parameter).contains("{@code " + parameter.configName() + "}");
        }
    }

    @Test
    void theJaxRsJavadocListsEveryPropertyAndTheAnnotationHasEveryAttribute() throws IOException {
        String jaxrs = "jaxrs-feature/src/main/java/dev/sluice/jaxrs/";
        String annotation = read(jaxrs + "RateLimit.java");
        List<String> docs = List.of(javadocBefore(read(jaxrs + "RateLimitFeature.java"), "public final class RateLimitFeature"),
                javadocBefore(annotation, "public @interface RateLimit"));
        for (Parameter parameter : Parameter.of(Parameter.Scope.APPLICATION)) {
            Pattern property = Pattern.compile("sluice\\." + Pattern.quote(parameter.configName()) + "(?![\\w-])");
            for (String doc : docs) {
                assertThat(property.matcher(doc).find()).as("property sluice." + parameter.configName()).isTrue();
            }
        }
        for (Parameter parameter : Parameter.of(Parameter.Scope.ROUTE)) {
            String attribute = attributeName(parameter.configName());
            // The type may be an array: String[] tiers().
            assertThat(Pattern.compile("\\*/\\s+\\w+(\\[])? " + attribute + "\\(\\)").matcher(annotation).find())
                    .as("documented attribute " + attribute + "()").isTrue();
        }
    }
}
