package dev.sluice.javax;

import dev.sluice.Limit;
import dev.sluice.RateLimiter;
import dev.sluice.web.HeaderStyle;
import dev.sluice.servlet.RateLimitFilter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transformed filter built in Java and added through {@code javax.servlet.ServletContext.addFilter} in Tomcat 9.
 */
class ProgrammaticTest {

    @TempDir
    Path tomcatBase;

    @Test
    void aFilterBuiltAroundARateLimiterLimitsInTomcat9() throws Exception {
        RateLimiter limiter = RateLimiter.builder().limit(Limit.of("prog", "2/1m")).build();
        RateLimitFilter filter = new RateLimitFilter(limiter).withKey("header:X-API-Key,ip")
                .withHeaders(HeaderStyle.LEGACY);
        try (Running running = Tomcat9.deploy(WebApp.named("limited"), tomcatBase, (classes, context) ->
                context.addFilter("prog", filter).addMappingForUrlPatterns(null, false, "/prog/*"))) {
            List<Exchange> run = Exchange.run(running, List.of(
                    new Exchange.Step("/prog/x", "p1"),
                    new Exchange.Step("/prog/x", "p1"),
                    new Exchange.Step("/prog/x", "p1"),
                    new Exchange.Step("/prog/x", "p2")));
            assertThat(run).extracting(Exchange::status).containsExactly(200, 200, 429, 200);
            assertThat(run.get(0).headers()).containsEntry("RateLimit-Limit", "2")
                    .containsEntry("RateLimit-Remaining", "1")
                    .containsEntry("RateLimit-Reset", "30");
            assertThat(run.get(2).headers()).containsEntry("Retry-After", "30")
                    .containsEntry("RateLimit-Remaining", "0");
            assertThat(run.get(2).body()).contains("\"policy\":\"prog\"");
        }
    }
}
