package dev.sluice.spring.boot;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.web.HeaderStyle;
import dev.sluice.web.internal.Parameter;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata IDEs complete {@code sluice.*} from
 * (META-INF/spring-configuration-metadata.json) is generated from {@link Parameter}: its names
 * from the enum, its descriptions from each constant's Javadoc in Parameter.java, its value hints
 * from the enums that parse them. This test regenerates it and fails on any drift; run it with
 * {@code -Dsluice.metadata.write=true} to write the regenerated file.
 */
class ConfigurationMetadataTest {

    private static final Path COMMITTED = Path.of("src/main/resources/META-INF/spring-configuration-metadata.json");

    @Test
    void theCommittedMetadataIsWhatTheParameterListSays() throws IOException {
        String generated = generate();
        if (Boolean.getBoolean("sluice.metadata.write")) {
            Files.writeString(COMMITTED, generated);
        }
        assertThat(Files.readString(COMMITTED))
                .as("%s is generated from Parameter: run this test with -Dsluice.metadata.write=true", COMMITTED)
                .isEqualTo(generated);
    }

    @Test
    void theMetadataInTheJarListsEveryParameter() throws IOException {
        String metadata;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        for (Parameter p : Parameter.values()) {
            if (p != Parameter.POLICY) {
                assertThat(metadata).contains("\"name\": \"sluice." + p.configName() + "\"");
            }
            assertThat(metadata)
                    .containsPattern("\"name\": \"sluice.filters\"[^}]*[ ,(]" + Pattern.quote(p.configName()) + "[,)]");
        }
        assertThat(metadata).containsPattern("\"name\": \"sluice.filters\"[^}]*url-patterns");
    }

    /** The metadata of the parameters, as Spring Boot's configuration processor would write it. */
    static String generate() throws IOException {
        Map<String, String> descriptions = javadoc();
        StringBuilder json = new StringBuilder("{\n  \"groups\": [\n");
        json.append(entry("sluice", null, "The application's Sluice settings: every filter's defaults, and the "
                + "settings of @RateLimit on Spring MVC handlers.", "dev.sluice.spring.boot.SluiceAutoConfiguration"));
        json.append("\n  ],\n  \"properties\": [\n");
        List<String> properties = new java.util.ArrayList<>();
        for (Parameter p : Parameter.values()) {
            if (p == Parameter.POLICY) {
                continue; // each filter names its own
            }
            properties.add(entry("sluice." + p.configName(), "java.lang.String", descriptions.get(p.name())
                    + (p.scope() == Parameter.Scope.ROUTE ? " The default of every filter." : ""), null));
        }
        properties.add(entry("sluice.filters",
                "java.util.Map<java.lang.String,java.util.Map<java.lang.String,java.lang.String>>",
                "Rate-limit filters by name (the default policy name), each mapped to its 'url-patterns' (default /*) "
                        + "and configured by the parameters (" + Arrays.stream(Parameter.values())
                        .map(Parameter::configName)
                        .collect(Collectors.joining(", ")) + ") as sluice.filters.<name>.<parameter>.", null));
        json.append(String.join(",\n", properties));
        json.append("\n  ],\n  \"hints\": [\n");
        Map<String, List<String>> hints = new LinkedHashMap<>();
        hints.put("sluice.algorithm", Arrays.stream(Algorithm.values()).map(Algorithm::configName).toList());
        hints.put("sluice.failure-mode", Arrays.stream(FailureMode.values()).map(FailureMode::configName).toList());
        hints.put("sluice.headers", Arrays.stream(HeaderStyle.values()).map(HeaderStyle::configName).toList());
        hints.put("sluice.metrics", List.of("true", "false"));
        hints.put("sluice.partition-key", List.of("true", "false"));
        json.append(hints.entrySet().stream()
                .map(h -> "    {\n      \"name\": \"" + h.getKey() + "\",\n      \"values\": [\n"
                + h.getValue().stream().map(v -> "        {\n          \"value\": \"" + v + "\"\n        }")
                .collect(Collectors.joining(",\n")) + "\n      ]\n    }").collect(Collectors.joining(",\n")));
        return json.append("\n  ]\n}\n").toString();
    }

    private static String entry(String name, String type, String description, String sourceType) {
        StringBuilder e = new StringBuilder("    {\n      \"name\": \"").append(name).append('"');
        if (type != null) {
            e.append(",\n      \"type\": \"").append(type).append('"');
        }
        e.append(",\n      \"description\": \"").append(description.replace("\\", "\\\\").replace("\"", "\\\""))
                .append('"');
        if (sourceType != null) {
            e.append(",\n      \"sourceType\": \"").append(sourceType).append('"');
        }
        return e.append("\n    }").toString();
    }

    /**
     * Each constant's description, from its Javadoc in Parameter.java (found through the class's
     * package in the web module's sources): {@code /** {@code limit}: {@code <count>/<period>}, required. *}{@code /}
     * gives {@code <count>/<period>, required.}
     */
    private static Map<String, String> javadoc() throws IOException {
        Path source = Path.of("..", "web", "src", "main", "java")
                .resolve(Parameter.class.getName().replace('.', '/') + ".java");
        String text = Files.readString(source);
        Matcher m = Pattern.compile("/\\*\\*[\\s*]*(.*?)\\s*\\*/\\s*([A-Z0-9_]+)\\(\"", Pattern.DOTALL).matcher(text);
        Map<String, String> descriptions = new LinkedHashMap<>();
        while (m.find()) {
            String d = m.group(1).replaceAll("\\s*\\n\\s*\\*\\s*", " ").replaceAll("\\{@(?:code|link) ([^}]*)}", "$1");
            d = d.replaceFirst("^[a-z0-9-]+: ", "");
            descriptions.put(m.group(2), Character.toUpperCase(d.charAt(0)) + d.substring(1));
        }
        for (Parameter p : Parameter.values()) {
            assertThat(descriptions).as("Javadoc of Parameter.%s", p.name()).containsKey(p.name());
        }
        return descriptions;
    }
}
