package dev.sluice.spring.boot;

import dev.sluice.spring.boot.demo.DemoApplication;
import dev.sluice.spring.boot.demo.DemoController;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.web.context.request.async.DeferredResult;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Spring Boot 4 application on embedded Tomcat, limited by application.yml and {@code @RateLimit}
 * through the starter alone, on the in-memory store, over HTTP.
 */
@SpringBootTest(classes = DemoApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class StarterTest {

    @LocalServerPort
    int port;

    @Autowired
    SluiceSettings settings;

    @Test
    void aPolicyFromApplicationYmlAnswers429WithRetryAfterAndAProblem() {
        Http http = new Http(port);
        assertThat(http.get("/search?q=a").statusCode()).isEqualTo(200);
        HttpResponse<String> second = http.get("/search?q=b");
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(second.headers().firstValue("RateLimit-Policy"))
                .hasValueSatisfying(v -> assertThat(v).contains("search"));
        HttpResponse<String> third = http.get("/search?q=c");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After"))
                .hasValueSatisfying(v -> assertThat(Long.parseLong(v)).isPositive());
        assertThat(third.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(third.body()).contains("\"status\":429");

        // The 429s are counted on the application's registry, which Actuator reads.
        HttpResponse<String> metrics =
                http.get("/actuator/metrics/sluice.decisions?tag=outcome:rejected&tag=policy:search");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).containsPattern("\"statistic\":\"COUNT\",\"value\":[1-9]");
    }

    @Test
    void rateLimitOnAGetMappingLimitsThatRouteAndNotItsNeighbour() {
        Http http = new Http(port);
        assertThat(http.get("/orders/1").statusCode()).isEqualTo(200);
        assertThat(http.get("/orders/2").statusCode()).isEqualTo(200);
        HttpResponse<String> third = http.get("/orders/3");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After")).isPresent();
        assertThat(third.body()).contains("\"status\":429");
        for (int i = 0; i < 5; i++) {
            assertThat(http.get("/orders").statusCode()).isEqualTo(200);
        }
    }

    @Test
    void aPrincipalKeyCountsEachSignedInUserBehindSpringSecurity() {
        Http http = new Http(port);
        assertThat(http.get("/account").statusCode()).isEqualTo(401); // Spring Security answers first
        assertThat(http.get("/account", "alice", "alice-secret").statusCode()).isEqualTo(200);
        assertThat(http.get("/account", "alice", "alice-secret").statusCode()).isEqualTo(200);
        assertThat(http.get("/account", "alice", "alice-secret").statusCode()).isEqualTo(429);
        // Same address, another user: another budget.
        assertThat(http.get("/account", "bob", "bob-secret").statusCode()).isEqualTo(200);
    }

    @Test
    void chargeAfterCountsFailedSignInsOnly() {
        Http http = new Http(port);
        for (int i = 0; i < 4; i++) {
            assertThat(http.post("/login?password=right").statusCode()).isEqualTo(200);
        }
        assertThat(http.post("/login?password=wrong").statusCode()).isEqualTo(401);
        assertThat(http.post("/login?password=wrong").statusCode()).isEqualTo(401);
        assertThat(http.post("/login?password=right").statusCode()).isEqualTo(429);
    }

    @Test
    void aConcurrencyCapOnAnAsyncHandlerHoldsUntilTheResponseCompletes() throws Exception {
        Http http = new Http(port);
        DemoController.SLOW.clear();
        List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
        List<DeferredResult<String>> pending = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            held.add(http.getAsync("/slow"));
            DeferredResult<String> result = DemoController.SLOW.poll(20, TimeUnit.SECONDS);
            assertThat(result).as("slow request %s reached the handler", i).isNotNull();
            pending.add(result);
        }
        HttpResponse<String> third = http.get("/slow");
        assertThat(third.statusCode()).isEqualTo(429);
        assertThat(third.headers().firstValue("Retry-After")).isPresent();

        pending.forEach(r -> r.setResult("done\n"));
        for (CompletableFuture<HttpResponse<String>> response : held) {
            assertThat(response.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
        // Both leases are back: two more are let in at once.
        CompletableFuture<HttpResponse<String>> again = http.getAsync("/slow");
        CompletableFuture<HttpResponse<String>> andAgain = http.getAsync("/slow");
        for (int i = 0; i < 2; i++) {
            DeferredResult<String> result = DemoController.SLOW.poll(20, TimeUnit.SECONDS);
            assertThat(result).as("request %s after the leases were returned reached the handler", i).isNotNull();
            result.setResult("done\n");
        }
        assertThat(again.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        assertThat(andAgain.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    @Test
    void theApplicationsPropertiesAreReadAsPlainText() {
        assertThat(settings.application()).containsEntry("headers", "both");
        assertThat(settings.filters()).extracting(SluiceSettings.FilterSettings::name)
                .containsExactly("search", "account");
        assertThat(settings.filters().get(0).urlPatterns()).containsExactly("/search/*");
    }
}
