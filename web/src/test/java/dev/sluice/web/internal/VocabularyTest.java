package dev.sluice.web.internal;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration vocabulary and its documentation cannot drift apart: every parameter the
 * parsers know is documented in {@code docs/configuration.md}, in the servlet filter's and the
 * JAX-RS feature's Javadoc, and in every page that has a parameter table; and no page
 * ({@code README.md}, {@code docs/*.md}) names a parameter that does not exist.
 *
 * <p>Where a page names a parameter, precisely:
 * <ul>
 *   <li>a row of a parameter table, a table whose first header cell is {@code name},
 *       {@code parameter}, {@code init-param}, {@code property} ({@code sluice.<name>}) or
 *       {@code attribute} ({@code @RateLimit}'s camel-case name), its first cell in backticks;
 *   <li>an inline code span that starts {@code <name>=} or {@code sluice.<name>=}, such as
 *       {@code `key=global`} (a few other {@code name=value} forms are not parameters:
 *       {@link #NOT_PARAMETERS});
 *   <li>in {@code web.xml} snippets, an init-param of a {@code <filter>} of
 *       {@code dev.sluice.servlet.RateLimitFilter}, and a context-param {@code sluice.<name>};
 *   <li>in Java snippets, {@code property("sluice.<name>", ...)}, and the attributes of
 *       {@code @RateLimit(...)}, which must be the annotation's.
 * </ul>
 * Reads the files from the source tree (the working directory is this module's).
 */
class VocabularyTest {

    private static final Path ROOT = Path.of("..");

    /**
     * Spans of the form {@code name=value} that are not Sluice parameters: the members of the
     * draft rate-limit headers ({@code q=40;w=1}), RFC 7239's {@code for=}, the metrics' tag
     * {@code outcome=}, and the benchmarks' {@code keys=} setting.
     */
    private static final Set<String> NOT_PARAMETERS = Set.of("q", "w", "r", "t", "pk", "for", "outcome", "keys");

    private static final Set<String> TABLE_HEADERS = Set.of("name", "parameter", "init-param", "property", "attribute");
    private static final String NAME = "[a-z][a-z0-9]*(?:-[a-z0-9]+)*";
    private static final Pattern SEPARATOR = Pattern.compile("^\\|(\\s*:?-{3,}:?\\s*\\|)+\\s*$");
    private static final Pattern TABLE_ROW = Pattern.compile("^\\|\\s*`([^`]+)`\\s*\\|");
    private static final Pattern CODE_SPAN = Pattern.compile("`([^`\\n]+)`");
    private static final Pattern ASSIGNMENT = Pattern.compile("^(?:sluice\\.)?(" + NAME + ")=\\S");
    private static final Pattern FILTER = Pattern.compile("<filter>(.*?)</filter>", Pattern.DOTALL);
    private static final Pattern PARAM_NAME = Pattern.compile("<param-name>\\s*([^<\\s]+)\\s*</param-name>");
    private static final Pattern CONTEXT_PARAM = Pattern.compile(
            "<context-param>\\s*<param-name>\\s*sluice\\.([^<\\s]+)\\s*</param-name>");
    private static final Pattern PROPERTY_CALL = Pattern.compile("property\\(\\s*\"sluice\\.([a-z][^\"]*)\"");
    private static final Pattern ANNOTATION = Pattern.compile("@RateLimit\\(([^)]*)\\)");
    private static final Pattern ATTRIBUTE = Pattern.compile("(\\w+)\\s*=");

    private static String read(String path) {
        try {
            return Files.readString(ROOT.resolve(path));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** README.md and every page under docs/, as paths relative to the repository root. */
    private static List<String> pages() throws IOException {
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            List<String> pages = new ArrayList<>(List.of("README.md"));
            docs.map(p -> "docs/" + p.getFileName()).filter(p -> p.endsWith(".md")).sorted().forEach(pages::add);
            return pages;
        }
    }

    private static boolean isParameter(String name) {
        return Arrays.stream(Parameter.values()).anyMatch(p -> p.configName().equals(name));
    }

    private static Set<String> allNames() {
        Set<String> names = new TreeSet<>();
        Arrays.stream(Parameter.values()).forEach(p -> names.add(p.configName()));
        return names;
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

    /** The parameter an annotation attribute stands for: {@code failureMode} is {@code failure-mode}. */
    private static String configNameOfAttribute(String attribute) {
        if (attribute.equals("tiers")) {
            return Parameter.TIER_LIMITS.configName();
        }
        return Pattern.compile("([A-Z])").matcher(attribute).replaceAll(m -> "-" + m.group(1).toLowerCase());
    }

    /** A parameter table's cell-to-name rule, by its first header cell; null if the table lists no parameters. */
    private static UnaryOperator<String> tableKind(String headerLine) {
        String first = headerLine.split("\\|", -1)[1].trim().toLowerCase();
        if (!TABLE_HEADERS.contains(first)) {
            return null;
        }
        return switch (first) {
            case "property" -> cell -> cell.startsWith("sluice.") ? cell.substring("sluice.".length())
                    : "(no sluice. prefix) " + cell;
            case "attribute" -> VocabularyTest::configNameOfAttribute;
            default -> cell -> cell;
        };
    }

    /** The parameter names a page's parameter tables list, each with where it stands. */
    private static List<Named> tableRows(String page, String text) {
        List<Named> rows = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        UnaryOperator<String> kind = null;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (!line.startsWith("|")) {
                kind = null;
            } else if (i + 1 < lines.length && SEPARATOR.matcher(lines[i + 1]).matches()) {
                kind = tableKind(line);                          // a header row: what does this table list?
            } else if (kind != null && !SEPARATOR.matcher(line).matches()) {
                Matcher row = TABLE_ROW.matcher(line);
                rows.add(new Named(page, i + 1,
                        row.find() ? kind.apply(row.group(1)) : "(not a backticked name) " + line));
            }
        }
        return rows;
    }

    /** Every place a page names a parameter, by the rules of the class description. */
    private static List<Named> namedParameters(String page) {
        String text = read(page);
        List<Named> named = new ArrayList<>(tableRows(page, text));
        Matcher span = CODE_SPAN.matcher(text);
        while (span.find()) {
            Matcher assignment = ASSIGNMENT.matcher(span.group(1));
            if (assignment.find() && !NOT_PARAMETERS.contains(assignment.group(1))) {
                named.add(new Named(page, lineOf(text, span.start()), assignment.group(1)));
            }
        }
        Matcher filter = FILTER.matcher(text);
        while (filter.find()) {
            if (filter.group(1).contains("dev.sluice.servlet.RateLimitFilter")) {
                Matcher param = PARAM_NAME.matcher(filter.group(1));
                while (param.find()) {
                    named.add(new Named(page, lineOf(text, filter.start(1) + param.start()), param.group(1)));
                }
            }
        }
        for (Pattern pattern : List.of(CONTEXT_PARAM, PROPERTY_CALL)) {
            Matcher m = pattern.matcher(text);
            while (m.find()) {
                named.add(new Named(page, lineOf(text, m.start()), m.group(1)));
            }
        }
        return named;
    }

    private static int lineOf(String text, int offset) {
        return (int) text.substring(0, offset).chars().filter(c -> c == '\n').count() + 1;
    }

    /** A parameter name as a page writes it, and where. */
    private record Named(String page, int line, String name) {
        @Override
        public String toString() {
            return page + ":" + line + ": " + name;
        }
    }

    @Test
    void theConfigurationReferenceHasARowPerParameter() {
        Set<String> rows = new LinkedHashSet<>();
        tableRows("docs/configuration.md", read("docs/configuration.md")).forEach(r -> rows.add(r.name()));
        assertThat(rows).as("the parameter table of docs/configuration.md").containsAll(allNames());
    }

    @Test
    void everyPageWithAParameterTableListsEveryParameter() throws IOException {
        List<String> lagging = new ArrayList<>();
        for (String page : pages()) {
            List<Named> rows = tableRows(page, read(page));
            if (rows.isEmpty()) {
                continue;
            }
            Set<String> missing = allNames();
            rows.forEach(r -> missing.remove(r.name()));
            if (!missing.isEmpty()) {
                lagging.add(page + " lacks " + missing);
            }
        }
        assertThat(lagging).as("pages whose parameter tables lack parameters").isEmpty();
    }

    @Test
    void noPageNamesAParameterThatDoesNotExist() throws IOException {
        List<Named> unknown = new ArrayList<>();
        int seen = 0;
        for (String page : pages()) {
            for (Named named : namedParameters(page)) {
                seen++;
                if (!isParameter(named.name())) {
                    unknown.add(named);
                }
            }
        }
        assertThat(seen).as("parameter mentions found (the rules still match the pages)").isGreaterThan(100);
        assertThat(unknown).as("names that are not parameters (known: " + allNames() + ")").isEmpty();
    }

    @Test
    void everyRateLimitSnippetUsesTheAnnotationsAttributes() throws IOException {
        Set<String> attributes = new TreeSet<>();
        String source = read("jaxrs-feature/src/main/java/dev/sluice/jaxrs/RateLimit.java");
        // The annotation's own methods, not those of its container (RateLimit.List's value()).
        Matcher method = Pattern.compile("\\s(\\w+)\\(\\)(?: default [^;]+)?;")
                .matcher(source.substring(0, source.indexOf("@interface List")));
        while (method.find()) {
            attributes.add(method.group(1));
        }
        assertThat(attributes).contains("limit", "failureMode", "tiers").doesNotContain("value");
        List<Named> unknown = new ArrayList<>();
        int seen = 0;
        for (String page : pages()) {
            String text = read(page);
            Matcher annotation = ANNOTATION.matcher(text);
            while (annotation.find()) {
                Matcher attribute = ATTRIBUTE.matcher(annotation.group(1).replaceAll("\"[^\"]*\"", "\"\""));
                while (attribute.find()) {
                    seen++;
                    if (!attributes.contains(attribute.group(1))) {
                        unknown.add(new Named(page, lineOf(text, annotation.start()),
                                "@RateLimit " + attribute.group(1)));
                    }
                }
            }
        }
        assertThat(seen).as("@RateLimit attributes found in the pages").isGreaterThan(20);
        assertThat(unknown).as("@RateLimit attributes that do not exist (known: " + attributes + ")").isEmpty();
    }

    /** The Javadoc comment right before {@code declaration}. */
    private static String javadocBefore(String source, String declaration) {
        int end = source.indexOf(declaration);
        assertThat(end).as(declaration).isPositive();
        return source.substring(source.lastIndexOf("/**", end), end);
    }

    @Test
    void theFilterJavadocListsEveryInitParam() {
        String doc = javadocBefore(read("servlet-filter/src/main/java/dev/sluice/servlet/RateLimitFilter.java"),
                "public final class RateLimitFilter");
        for (Parameter parameter : Parameter.values()) {
            assertThat(doc).as("init-param " + parameter).contains("{@code " + parameter.configName() + "}");
        }
    }

    @Test
    void theJaxRsJavadocListsEveryPropertyAndTheAnnotationHasEveryAttribute() {
        String jaxrs = "jaxrs-feature/src/main/java/dev/sluice/jaxrs/";
        String annotation = read(jaxrs + "RateLimit.java");
        List<String> docs =
                List.of(javadocBefore(read(jaxrs + "RateLimitFeature.java"), "public final class RateLimitFeature"),
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
