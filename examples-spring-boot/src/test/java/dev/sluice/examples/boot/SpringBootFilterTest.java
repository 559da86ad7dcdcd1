package dev.sluice.examples.boot;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter, run: the application starts in embedded Tomcat 11 on a random
 * loopback port, and real HTTP requests get 200s, then 429 with Retry-After and a problem body;
 * behind Spring Security's HTTP Basic, a filter keyed by principal counts each user. Memory store.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"server.address=127.0.0.1", "sluice.store=memory"})
class SpringBootFilterTest {

    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @LocalServerPort
    int port;

    static HttpResponse<String> get(int port, String path, String apiKey) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("X-API-Key", apiKey).timeout(Duration.ofSeconds(10)).GET().build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** Five 200s with the budget counting down, then a 429 with Retry-After and the RFC 9457 body. */
    static void fiveThenRejected(int port, String apiKey) throws Exception {
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> ok = get(port, "/search?q=sluice", apiKey);
            assertThat(ok.statusCode()).as("request %d", i + 1).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("results for 'sluice'\n");
            assertThat(ok.headers().firstValue("RateLimit-Limit")).hasValue("5");
            assertThat(ok.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(4 - i));
            // search-per-ip, the other filter on /search, sends no headers (headers=none): not even in this list.
            assertThat(ok.headers().firstValue("RateLimit-Policy")).hasValue("\"search\";q=5;w=60");
        }
        HttpResponse<String> refused = get(port, "/search?q=sluice", apiKey);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).get().satisfies(
                seconds -> assertThat(Long.parseLong(seconds)).isBetween(1L, 60L));
        assertThat(refused.headers().firstValue("RateLimit-Remaining")).hasValue("0");
        assertThat(refused.headers().firstValue("Content-Type")).get().asString()
                .startsWith("application/problem+json");
        JsonNode problem = new ObjectMapper().readTree(refused.body());
        assertThat(problem.get("type").asString()).isEqualTo("about:blank");
        assertThat(problem.get("title").asString()).isEqualTo("Too Many Requests");
        assertThat(problem.get("status").asInt()).isEqualTo(429);
        assertThat(problem.get("policy").asString()).isEqualTo("search");
        assertThat(problem.get("detail").asString())
                .startsWith("Rate limit exceeded for policy 'search'; retry after ");
    }

    static HttpResponse<String> getAccount(int port, String user) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/account"))
                .timeout(Duration.ofSeconds(10)).GET();
        if (user != null) {
            String credentials = user + ":" + user + "-secret";
            request.header("Authorization",
                    "Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void twoHundredsThenTooManyRequestsOverRealHttp() throws Exception {
        fiveThenRejected(port, "key-" + UUID.randomUUID());
    }

    @Test
    void eachApiKeyHasItsOwnBudgetAndRoutesOutsideThePatternAreNotLimited() throws Exception {
        String spent = "key-" + UUID.randomUUID();
        fiveThenRejected(port, spent);
        assertThat(get(port, "/search", "key-" + UUID.randomUUID()).statusCode()).isEqualTo(200);
        HttpResponse<String> elsewhere = get(port, "/elsewhere", spent);
        assertThat(elsewhere.statusCode()).as("no filter on /elsewhere: Spring's own 404").isEqualTo(404);
        assertThat(elsewhere.headers().firstValue("RateLimit-Limit")).isEmpty();
    }

    @Test
    void theExcludedHelpPageIsNeverLimited() throws Exception {
        String apiKey = "key-" + UUID.randomUUID();
        for (int i = 0; i < 7; i++) {
            HttpResponse<String> help = get(port, "/search/help", apiKey);
            assertThat(help.statusCode()).as("request %d", i + 1).isEqualTo(200);
            assertThat(help.headers().firstValue("RateLimit-Limit")).isEmpty();
        }
        fiveThenRejected(port, apiKey);
    }

    /** The KeyResolver bean names the partner: two partners behind one address have a budget each. */
    @Test
    void eachPartnerHasItsOwnBudgetThroughTheKeyResolverBean() throws Exception {
        for (int i = 0; i < 20; i++) {
            assertThat(partner(port, "token-acme").statusCode()).as("acme, request %d", i + 1).isEqualTo(200);
        }
        assertThat(partner(port, "token-acme").statusCode()).isEqualTo(429);
        HttpResponse<String> globex = partner(port, "token-globex");
        assertThat(globex.statusCode()).as("globex, from the same address").isEqualTo(200);
        assertThat(globex.headers().firstValue("RateLimit-Remaining")).hasValue("19");
    }

    static HttpResponse<String> partner(int port, String token) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/partners/catalog"))
                .header("X-Partner-Token", token).timeout(Duration.ofSeconds(10)).GET().build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** Ordered after Spring Security, a filter keyed by principal counts each signed-in user, from one address. */
    @Test
    void aFilterKeyedByPrincipalAfterSpringSecurityCountsEachSignedInUser() throws Exception {
        assertThat(getAccount(port, null).statusCode()).as("no credentials: Spring Security's 401").isEqualTo(401);
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> ok = getAccount(port, "alice");
            assertThat(ok.statusCode()).as("alice, request %d", i + 1).isEqualTo(200);
            assertThat(ok.body()).isEqualTo("account of alice\n");
            assertThat(ok.headers().firstValue("RateLimit-Remaining")).hasValue(Integer.toString(2 - i));
        }
        HttpResponse<String> refused = getAccount(port, "alice");
        assertThat(refused.statusCode()).as("alice, request 4").isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).isPresent();
        assertThat(new ObjectMapper().readTree(refused.body()).get("policy").asString()).isEqualTo("account");
        HttpResponse<String> bob = getAccount(port, "bob");
        assertThat(bob.statusCode()).as("bob, from the same address, has his own budget").isEqualTo(200);
        assertThat(bob.headers().firstValue("RateLimit-Remaining")).hasValue("2");
    }

    /** {@code @RateLimit} on one handler method limits that route, not its neighbour. */
    @Test
    void rateLimitOnAControllerMethodLimitsThatRouteAlone() throws Exception {
        for (int i = 0; i < 10; i++) {
            assertThat(get(port, "/suggest/sl", "any").statusCode()).as("request %d", i + 1).isEqualTo(200);
        }
        HttpResponse<String> refused = get(port, "/suggest/sl", "any");
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).isPresent();
        assertThat(new ObjectMapper().readTree(refused.body()).get("policy").asString())
                .startsWith("SearchController.suggest~");
        assertThat(get(port, "/suggest", "any").statusCode()).isEqualTo(200);
    }
}
