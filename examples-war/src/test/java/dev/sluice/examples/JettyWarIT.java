package dev.sluice.examples;

import dev.sluice.testing.HttpCalls;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The examples WAR file deployed in embedded Jetty 12 EE11, as the demo runs it. */
class JettyWarIT extends WarContract {

    @Override
    Deployed deploy(Map<String, String> contextParams) throws Exception {
        return JettyWar.deploy(Http.war(), "127.0.0.1", 0, contextParams);
    }

    @Test
    void theConsoleAsksForTheDemoLoginAndThenListsThePolicies() throws Exception {
        try (Deployed app = deploy(Map.of())) {
            HttpResponse<String> challenged = HttpCalls.send("GET", app.base().resolve("sluice/policies"));
            assertThat(challenged.statusCode()).isEqualTo(401);
            assertThat(HttpCalls.header(challenged, "WWW-Authenticate")).startsWith("Basic");
            String login = "Basic " + Base64.getEncoder().encodeToString(
                    (DemoRealm.USER + ":" + DemoRealm.PASSWORD).getBytes(StandardCharsets.UTF_8));
            HttpResponse<String> listed =
                    HttpCalls.send("GET", app.base().resolve("sluice/policies"), "Authorization", login);
            assertThat(listed.statusCode()).isEqualTo(200);
            assertThat(listed.body()).contains("\"name\":\"hello\"", "\"limit\":\"5/10s\"");
            HttpResponse<String> page = HttpCalls.send("GET", app.base().resolve("sluice/"), "Authorization", login);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("Sluice console");
        }
    }
}
