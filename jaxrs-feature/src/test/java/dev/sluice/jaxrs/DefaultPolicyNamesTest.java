package dev.sluice.jaxrs;

import dev.sluice.testing.TestRedis;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Default policy names, over real HTTP on a real Redis: one budget per resource method, also for
 * overloads and for classes of the same simple name, under a name every node computes alike.
 *
 * <p>The expected names are literals: {@code <SimpleName>.<method>~} and the first 8 hex digits of
 * the SHA-256 of {@code <binary class name>.<method>(<parameter types>)}, e.g.
 * {@code printf '%s' 'dev.sluice.jaxrs.names.a.Twin.get()' | sha256sum | cut -c1-8}. A literal
 * also pins that the name does not depend on this JVM (no hash codes, no declaration order).
 */
class DefaultPolicyNamesTest {

    private static JerseyApp app;

    @BeforeAll
    static void start() throws Exception {
        app = JerseyApp.start(config());
    }

    private static ResourceConfig config() {
        return new ResourceConfig(Resources.Overloads.class, Resources.Repeated.class,
                dev.sluice.jaxrs.names.a.Twin.class, dev.sluice.jaxrs.names.b.Twin.class)
                .register(RateLimitFeature.class)
                .property("sluice.store", TestRedis.shared().url())
                .property("sluice.timeout", "2s")
                .property("sluice.headers", "both");
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            app.close();
        }
    }

    private static String client() {
        return UUID.randomUUID().toString();
    }

    private static String header(HttpResponse<?> response, String name) {
        return response.headers().firstValue(name).orElse(null);
    }

    /** Spends a 2/1m budget of its own: 200 with remaining 1, 200 with remaining 0, then 429. */
    private static List<HttpResponse<String>> spendTwo(Function<String, HttpResponse<String>> call, String me) {
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> response = call.apply(me);
            assertThat(response.statusCode()).as("request %d", i).isEqualTo(i <= 2 ? 200 : 429);
            assertThat(header(response, "RateLimit-Remaining")).as("request %d", i)
                    .isEqualTo(i <= 2 ? Integer.toString(2 - i) : "0");
            responses.add(response);
        }
        return responses;
    }

    /** The responses of {@link #spendTwo} name {@code policy} in the headers and the problem body. */
    private static void assertNamed(List<HttpResponse<String>> responses, String policy) {
        for (int i = 0; i < 2; i++) {
            assertThat(header(responses.get(i), "RateLimit-Policy")).isEqualTo("\"" + policy + "\";q=2;w=60");
            assertThat(header(responses.get(i), "RateLimit")).startsWith("\"" + policy + "\";r=" + (1 - i) + ";t=");
        }
        HttpResponse<String> rejected = responses.get(2);
        assertThat(rejected.body()).contains("\"policy\":\"" + policy + "\"")
                .contains("Rate limit exceeded for policy '" + policy + "'");
        assertThat(header(rejected, "RateLimit")).startsWith("\"" + policy + "\";r=0;t=");
    }

    @Test
    void overloadsOfOneJavaMethodHaveABudgetEach() {
        String me = client();
        List<HttpResponse<String>> none = spendTwo(c -> app.get("/over/item", "X-Client", c), me);
        // Same Java name, other parameters: a budget of its own, untouched by the first overload's.
        List<HttpResponse<String>> one = spendTwo(c -> app.get("/over/item/7", "X-Client", c), me);
        List<HttpResponse<String>> two = spendTwo(c -> app.post("/over/item/7?n=3", "X-Client", c), me);
        assertNamed(none, "Overloads.item~b10a48f1");
        assertNamed(one, "Overloads.item~90510c2e");
        assertNamed(two, "Overloads.item~8dbe38a4");
    }

    @Test
    void classesOfTheSameSimpleNameInTwoPackagesHaveABudgetEach() {
        String me = client();
        List<HttpResponse<String>> a = spendTwo(c -> app.get("/a/twin", "X-Client", c), me);
        List<HttpResponse<String>> b = spendTwo(c -> app.get("/b/twin", "X-Client", c), me);
        assertNamed(a, "Twin.get~5800a4bb");
        assertNamed(b, "Twin.get~3a288801");
    }

    @Test
    void repeatedAnnotationsKeepADefaultNameEach() {
        String me = client();
        HttpResponse<String> first = app.get("/repeated", "X-Client", me);
        assertThat(first.statusCode()).isEqualTo(200);
        assertThat(header(first, "RateLimit-Policy"))
                .isEqualTo("\"Repeated.get~1bc53899-1\";q=1;w=60, \"Repeated.get~1bc53899-2\";q=5;w=3600");
        HttpResponse<String> rejected = app.get("/repeated", "X-Client", me);
        assertThat(rejected.statusCode()).isEqualTo(429);
        assertThat(rejected.body()).contains("\"policy\":\"Repeated.get~1bc53899-1\"");
    }

    @Test
    void anotherNodeOrARestartUsesTheSameNamesAndSoTheSameBudget() throws Exception {
        String me = client();
        assertThat(app.get("/a/twin", "X-Client", me).statusCode()).isEqualTo(200);
        // A second node of the application, started afresh on the same Redis, meets the same budget.
        try (JerseyApp other = JerseyApp.start(config())) {
            HttpResponse<String> second = other.get("/a/twin", "X-Client", me);
            assertThat(second.statusCode()).isEqualTo(200);
            assertThat(header(second, "RateLimit-Remaining")).isEqualTo("0");
            assertThat(header(second, "RateLimit")).startsWith("\"Twin.get~5800a4bb\";r=0;");
            assertThat(other.get("/a/twin", "X-Client", me).statusCode()).isEqualTo(429);
        }
        assertThat(app.get("/a/twin", "X-Client", me).statusCode()).isEqualTo(429);
    }
}
