package dev.sluice.examples;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import static org.assertj.core.api.Assertions.assertThat;

/** What the WAR file carries: both adapters and a JAX-RS runtime, but no container API. */
class WarFileIT {

    @Test
    void bundlesTheAdaptersAndJerseyButNoContainerApi() throws IOException {
        List<String> entries;
        try (ZipFile war = new ZipFile(Http.war().toFile())) {
            entries = war.stream().map(ZipEntry::getName).toList();
        }
        assertThat(entries).contains("WEB-INF/web.xml", "index.html",
                "WEB-INF/classes/dev/sluice/examples/Examples.class",
                "WEB-INF/classes/dev/sluice/examples/HelloServlet.class");
        List<String> libs = entries.stream().filter(e -> e.startsWith("WEB-INF/lib/"))
                .map(e -> e.substring("WEB-INF/lib/".length())).toList();
        assertThat(libs).anyMatch(l -> l.startsWith("sluice-servlet-filter-"))
                .anyMatch(l -> l.startsWith("sluice-jaxrs-feature-"))
                .anyMatch(l -> l.startsWith("sluice-core-"))
                .anyMatch(l -> l.startsWith("jersey-container-servlet-4."))
                .anyMatch(l -> l.startsWith("jakarta.ws.rs-api-4."));
        // The container provides the Servlet API; a copy in WEB-INF/lib breaks class loading.
        assertThat(libs).noneMatch(l -> l.startsWith("jakarta.servlet-api") || l.startsWith("jetty-")
                || l.startsWith("tomcat-"));
    }
}
