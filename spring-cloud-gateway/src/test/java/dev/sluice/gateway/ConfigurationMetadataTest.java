package dev.sluice.gateway;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** The IDE's list of {@code sluice.gateway.*} properties is exactly the list the auto-configuration accepts. */
class ConfigurationMetadataTest {

    @Test
    void metadataNamesEveryAcceptedPropertyAndNoOther() throws IOException {
        String json;
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Set<String> documented = new TreeSet<>();
        Matcher name = Pattern.compile("\"name\": \"sluice\\.gateway\\.([a-z-]+)\"").matcher(json);
        while (name.find()) {
            documented.add(name.group(1));
        }
        assertThat(documented).isEqualTo(new TreeSet<>(SluiceGatewayAutoConfiguration.NAMES));
    }
}
