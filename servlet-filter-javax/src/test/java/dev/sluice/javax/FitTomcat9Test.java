package dev.sluice.javax;

import org.apache.catalina.valves.AccessLogValve;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transformed filter fits a javax application in Tomcat 9 ({@code webapps/fit}): defaults from
 * {@code sluice.*} context-params, callers keyed by the attribute the application's login set,
 * 429s written by the application's {@code <error-page>} with Sluice's headers, and Tomcat's own
 * {@code AccessLogValve} recording each decision from the request attributes.
 */
class FitTomcat9Test {

    @TempDir
    Path tomcatBase;
    @TempDir
    Path logs;

    @Test
    void contextParamDefaultsSendErrorAndAnAccessLogOfEveryDecision() throws Exception {
        AccessLogValve accessLog = new AccessLogValve();
        accessLog.setDirectory(logs.toString());
        accessLog.setPrefix("access");
        accessLog.setSuffix(".log");
        accessLog.setFileDateFormat("");
        accessLog.setBuffered(false);
        accessLog.setPattern("%U %s %{dev.sluice.outcome}r %{dev.sluice.policy}r %{dev.sluice.remaining}r "
                + "%{dev.sluice.partition}r");
        List<Exchange> run;
        try (Running running = Tomcat9.deploy(WebApp.named("fit"), tomcatBase, null,
                context -> context.getPipeline().addValve(accessLog))) {
            run = Exchange.run(running, List.of(
                    new Exchange.Step("/search/x", "acme"),
                    new Exchange.Step("/search/x", "acme"),
                    new Exchange.Step("/search/x", "globex"),
                    new Exchange.Step("/legacy/x", "acme"),
                    new Exchange.Step("/legacy/x", "acme")));
            // Tomcat logs an exchange after the client has its response: wait for the last line
            // while the server still runs, since stopping it may drop a line not yet written.
            Path file = logs.resolve("access.log");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while ((!Files.exists(file) || Files.readAllLines(file).size() < 5) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        }
        // search: key attribute:tenant (a context-param), one budget per tenant
        assertThat(run).extracting(Exchange::status).containsExactly(200, 429, 200, 200, 429);
        // headers=both, reject=send-error from the context-params: the error page's body, Sluice's headers
        assertThat(run.get(0).headers()).containsKeys("RateLimit-Limit", "RateLimit-Policy");
        assertThat(run.get(1).contentType()).startsWith("application/json");
        assertThat(run.get(1).body()).isEqualTo("{\"error\":\"slow down\",\"status\":429,\"policy\":\"search\"}");
        assertThat(run.get(1).headers()).containsEntry("RateLimit-Remaining", "0").containsKey("RateLimit")
                .containsKey("Retry-After");
        // legacy: its init-params override the context-params
        assertThat(run.get(3).headers()).containsKey("RateLimit-Limit").doesNotContainKey("RateLimit-Policy");
        assertThat(run.get(4).contentType()).isEqualTo("application/problem+json");

        List<String> lines = Files.readAllLines(logs.resolve("access.log"));
        assertThat(lines).hasSize(5);
        assertThat(lines.get(0)).matches("/search/x 200 allowed search 0 :[A-Za-z0-9+/]{16}:");
        assertThat(lines.get(1)).matches("/search/x 429 rejected search 0 :[A-Za-z0-9+/]{16}:");
        assertThat(lines.get(2)).matches("/search/x 200 allowed search 0 :[A-Za-z0-9+/]{16}:");
        assertThat(lines.get(1).substring(lines.get(1).lastIndexOf(' '))).as("one tenant, one partition key")
                .isEqualTo(lines.get(0).substring(lines.get(0).lastIndexOf(' ')))
                .isNotEqualTo(lines.get(2).substring(lines.get(2).lastIndexOf(' ')));
        assertThat(lines.get(4)).matches("/legacy/x 429 rejected legacy 0 :[A-Za-z0-9+/]{16}:");
    }
}
