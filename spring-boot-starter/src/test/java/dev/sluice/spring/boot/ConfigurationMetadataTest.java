package dev.sluice.spring.boot;

import dev.sluice.Algorithm;
import dev.sluice.FailureMode;
import dev.sluice.web.HeaderStyle;
import dev.sluice.web.internal.Parameter;
import dev.sluice.web.internal.WebSettings;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.json.JsonParserFactory;

import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration metadata IDEs complete {@code sluice.*} from (META-INF/spring-configuration-metadata.json),
 * which spring-boot-configuration-processor writes from {@link SluiceProperties} at compile time: every
 * parameter of {@link Parameter} is there, described in the words of its Javadoc in Parameter.java, with
 * its default and, for the enumerated ones, the values their enums parse; and a filter under
 * {@code sluice.filters.<name>.} takes every parameter.
 */
class ConfigurationMetadataTest {

    @Test
    void everyParameterIsAPropertyDescribedAsInParameterJavadoc() throws IOException {
        Map<String, Map<String, Object>> properties = properties();
        Map<String, String> descriptions = javadoc();
        for (Parameter p : Parameter.values()) {
            if (p == Parameter.POLICY) {
                assertThat(properties).as("each filter names its own policy").doesNotContainKey("sluice.policy");
                continue;
            }
            Map<String, Object> property = properties.get("sluice." + p.configName());
            assertThat(property).as("sluice.%s in the metadata", p.configName()).isNotNull();
            assertThat(property.get("description")).as("description of sluice.%s", p.configName())
                    .isEqualTo(descriptions.get(p.name()));
        }
        assertThat(properties.get("sluice.filters").get("type"))
                .isEqualTo("java.util.Map<java.lang.String,dev.sluice.spring.boot.SluiceProperties$Filter>");
        assertThat(properties.get("sluice.health.down-when-failing-open").get("defaultValue")).isEqualTo(false);
        assertThat(properties.get("sluice.meter-tags").get("type"))
                .isEqualTo("java.util.Map<java.lang.String,java.util.Map<java.lang.String,java.lang.String>>");
        assertThat((String) properties.get("sluice.meter-tags").get("description"))
                .startsWith("Tags added to the sluice.* meters of a policy");
    }

    @Test
    void aFilterTakesEveryParameterAndItsOwnSettings() {
        Set<String> names = Arrays.stream(BeanUtils.getPropertyDescriptors(SluiceProperties.Filter.class))
                .filter(d -> d.getWriteMethod() != null).map(PropertyDescriptor::getName)
                .map(n -> n.replaceAll("([A-Z])", "-$1").toLowerCase(java.util.Locale.ROOT))
                .collect(Collectors.toSet());
        for (Parameter p : Parameter.values()) {
            assertThat(names).as("sluice.filters.<name>.%s", p.configName()).contains(p.configName());
        }
        assertThat(names).contains("url-patterns", "exclude", "key-resolver", "limit-resolver", "key-expression",
                "skip-expression");
    }

    @Test
    void enumeratedParametersHintTheirValuesAndDefaultsAreTheVocabularys() throws IOException {
        Map<String, Object> metadata = metadata();
        Map<String, List<Object>> hints = new LinkedHashMap<>();
        for (Object hint : (List<?>) metadata.get("hints")) {
            Map<?, ?> h = (Map<?, ?>) hint;
            if (h.get("values") instanceof List<?> values) {
                hints.put((String) h.get("name"),
                        values.stream().<Object>map(v -> ((Map<?, ?>) v).get("value")).toList());
            }
        }
        assertThat(hints.get("sluice.algorithm"))
                .containsExactlyElementsOf(Arrays.stream(Algorithm.values()).map(Algorithm::configName).toList());
        assertThat(hints.get("sluice.failure-mode"))
                .containsExactlyElementsOf(Arrays.stream(FailureMode.values()).map(FailureMode::configName).toList());
        assertThat(hints.get("sluice.headers"))
                .containsExactlyElementsOf(Arrays.stream(HeaderStyle.values()).map(HeaderStyle::configName).toList());
        Map<String, Map<String, Object>> properties = properties();
        assertThat(properties.get("sluice.algorithm").get("defaultValue"))
                .isEqualTo(Algorithm.TOKEN_BUCKET.configName());
        assertThat(properties.get("sluice.failure-mode").get("defaultValue")).isEqualTo(FailureMode.OPEN.configName());
        assertThat(properties.get("sluice.headers").get("defaultValue"))
                .isEqualTo(WebSettings.DEFAULTS.headers().configName());
        assertThat(properties.get("sluice.store").get("defaultValue")).isEqualTo(WebSettings.DEFAULTS.store());
        assertThat(properties.get("sluice.timeout").get("defaultValue")).isEqualTo("100ms");
    }

    private static Map<String, Object> metadata() throws IOException {
        try (InputStream in = ConfigurationMetadataTest.class
                .getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the metadata the configuration processor wrote").isNotNull();
            return JsonParserFactory.getJsonParser().parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    private static Map<String, Map<String, Object>> properties() throws IOException {
        Map<String, Map<String, Object>> byName = new LinkedHashMap<>();
        for (Object property : (List<?>) metadata().get("properties")) {
            @SuppressWarnings("unchecked") // a JSON object
            Map<String, Object> p = (Map<String, Object>) property;
            byName.put((String) p.get("name"), p);
        }
        return byName;
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
