package dev.sluice.spring.boot;

import dev.sluice.spring.boot.demo.DemoApplication;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Actuator endpoint {@code sluice} over HTTP, in the starter's demo application on embedded
 * Tomcat: the same registry as the filters and the {@code @RateLimit} handlers.
 */
@SpringBootTest(classes = DemoApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"management.endpoints.web.exposure.include=sluice",
                "sluice.filters.quota.limit=2/1m", "sluice.filters.quota.url-patterns=/quota/*",
                "sluice.filters.gate.limit=2/1m", "sluice.filters.gate.url-patterns=/gate/*"})
class SluiceEndpointTest {

    /** The policy names {@code @RateLimit} gives {@code DemoController.order}: {@code DemoController.order~<hash>}. */
    private static final String ORDER = "DemoController.order~";

    @LocalServerPort
    int port;

    @Test
    void listsTheApplicationYmlPoliciesAndTheRateLimitRoutes() {
        Http http = new Http(port);
        HttpResponse<String> list = http.get("/actuator/sluice");
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.body())
                .contains("\"refreshSeconds\":2", "\"name\":\"search\"", "\"routes\":[\"filter 'search'\"]",
                "\"name\":\"" + ORDER, "handler method", "\"limit\":\"2/1m\"", "\"store\":\"memory\"");

        HttpResponse<String> one = http.get("/actuator/sluice/search");
        assertThat(one.statusCode()).isEqualTo(200);
        assertThat(one.body()).startsWith("{\"name\":\"search\"").contains("\"effective\":{\"limit\":\"2/1m\"");
        assertThat(http.get("/actuator/sluice/nothing").statusCode()).isEqualTo(404);
    }

    @Test
    void anOverrideAppliesToTheNextRequestsAndDeletingItReverts() {
        Http http = new Http(port);
        assertThat(http.get("/quota/a").statusCode()).isEqualTo(404); // no such page, but let through
        assertThat(http.get("/quota/a").statusCode()).isEqualTo(404);
        assertThat(http.get("/quota/a").statusCode()).isEqualTo(429);

        HttpResponse<String> set = http.postJson("/actuator/sluice/quota", "{\"limit\":\"50/1m\",\"burst\":\"50\"}",
                "alice", "alice-secret");
        assertThat(set.statusCode()).isEqualTo(200);
        assertThat(set.body()).contains("\"effective\":{\"limit\":\"50/1m\"",
                "\"override\":{\"limit\":\"50/1m\",\"burst\":\"50\",\"by\":\"alice\"", // the principal Actuator passes
                "\"configuredWhenSet\":{\"limit\":\"2/1m\",\"burst\":2}", "\"configuredChanged\":false",
                "\"applied\":true");
        assertThat(http.get("/quota/a").statusCode()).isEqualTo(404); // the new limit: room again

        HttpResponse<String> cleared = http.delete("/actuator/sluice/quota");
        assertThat(cleared.statusCode()).isEqualTo(200);
        assertThat(cleared.body()).contains("\"effective\":{\"limit\":\"2/1m\"", "\"override\":null");
        assertThat(http.get("/quota/a").statusCode()).isEqualTo(429); // 3 used of 2 again
    }

    @Test
    void anOverrideOnARateLimitRouteAppliesToIt() {
        Http http = new Http(port);
        String policy = policyNamed(http.get("/actuator/sluice").body(), ORDER);
        // The memory store is shared with the other tests' applications in this JVM: start and end afresh.
        assertThat(http.postJson("/actuator/sluice/" + policy, "{\"caller\":\"127.0.0.1\"}").statusCode())
                .isEqualTo(200);
        HttpResponse<String> set = http.postJson("/actuator/sluice/" + policy, "{\"limit\":\"4/1m\"}");
        assertThat(set.statusCode()).isEqualTo(200);
        try {
            for (int i = 0; i < 4; i++) {
                assertThat(http.get("/orders/o" + i).statusCode()).as("request %s", i).isEqualTo(200);
            }
            assertThat(http.get("/orders/o5").statusCode()).isEqualTo(429);
        } finally {
            assertThat(http.delete("/actuator/sluice/" + policy).statusCode()).isEqualTo(200);
            assertThat(http.postJson("/actuator/sluice/" + policy, "{\"caller\":\"127.0.0.1\"}").statusCode())
                    .isEqualTo(200);
        }
    }

    @Test
    void aResetLetsARefusedCallerIn() {
        Http http = new Http(port);
        for (int i = 0; i < 2; i++) {
            assertThat(http.get("/gate/" + i).statusCode()).isEqualTo(404); // no such page, but let through
        }
        assertThat(http.get("/gate/x").statusCode()).isEqualTo(429);
        HttpResponse<String> reset = http.postJson("/actuator/sluice/gate", "{\"caller\":\"127.0.0.1\"}");
        assertThat(reset.statusCode()).isEqualTo(200);
        assertThat(reset.body()).contains("\"reset\":[\"ip~127.0.0.1\"]");
        assertThat(http.get("/gate/y").statusCode()).isEqualTo(404);
    }

    @Test
    void aBadOverrideIs400WithTheParametersMessageAndChangesNothing() {
        Http http = new Http(port);
        HttpResponse<String> bad = http.postJson("/actuator/sluice/search",
                "{\"limit\":\"100/minutes\",\"burst\":\"100\"}");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("must look like <count>/<period> (e.g. 100/1m), got '100/minutes'");
        assertThat(http.get("/actuator/sluice/search").body()).contains("\"override\":null",
                "\"effective\":{\"limit\":\"2/1m\"");
        assertThat(http.postJson("/actuator/sluice/search", "{}").statusCode()).isEqualTo(400);
        assertThat(http.postJson("/actuator/sluice/nothing", "{\"limit\":\"1/1m\"}").statusCode()).isEqualTo(404);
    }

    private static String policyNamed(String list, String prefix) {
        int at = list.indexOf("\"name\":\"" + prefix);
        assertThat(at).as("a policy named %s... in %s", prefix, list).isNotNegative();
        int start = at + "\"name\":\"".length();
        return list.substring(start, list.indexOf('"', start));
    }
}
