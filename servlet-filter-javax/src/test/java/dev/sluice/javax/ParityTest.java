package dev.sluice.javax;

import dev.sluice.servlet.RateLimitFilter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The javax artifact in Tomcat 9 behaves exactly as the jakarta filter in Jetty 12: one
 * {@code web.xml} in the javax namespace, one request sequence, the same statuses, rate-limit
 * headers and problem bodies. The Tomcat run is also checked against explicit values, so that
 * the two cannot agree on a wrong answer.
 */
class ParityTest {

    /** An unmapped path, six calls with one API key (limit 5/1m), one with another, three on a second policy (2/1m). */
    private static final List<Exchange.Step> SEQUENCE = List.of(
            new Exchange.Step("/health", null),
            new Exchange.Step("/api/items", "k1"),
            new Exchange.Step("/api/items", "k1"),
            new Exchange.Step("/api/items", "k1"),
            new Exchange.Step("/api/items", "k1"),
            new Exchange.Step("/api/items", "k1"),
            new Exchange.Step("/api/items", "k1"),
            new Exchange.Step("/api/items", "k2"),
            new Exchange.Step("/search/q", null),
            new Exchange.Step("/search/q", null),
            new Exchange.Step("/search/q", null));

    @TempDir
    Path tomcatBase;

    @Test
    void theTransformedFilterIsTheJavaxOneAndTheReferenceIsTheJakartaOne() throws Exception {
        assertThat(javax.servlet.Filter.class).isAssignableFrom(RateLimitFilter.class);
        assertThat(jakarta.servlet.Filter.class.isAssignableFrom(RateLimitFilter.class)).isFalse();
        try (JakartaFilterJar jakarta = JakartaFilterJar.open()) {
            Class<?> reference = jakarta.loadClass(RateLimitFilter.class.getName());
            assertThat(reference).isNotSameAs(RateLimitFilter.class);
            assertThat(jakarta.servlet.Filter.class).isAssignableFrom(reference);
            assertThat(javax.servlet.Filter.class.isAssignableFrom(reference)).isFalse();
        }
    }

    @Test
    void tomcat9WithTheJavaxFilterAnswersAsJetty12WithTheJakartaFilter() throws Exception {
        WebApp app = WebApp.named("limited");

        List<Exchange> tomcat;
        try (Running running = Tomcat9.deploy(app, tomcatBase)) {
            tomcat = Exchange.run(running, SEQUENCE);
        }
        List<Exchange> jetty;
        try (JakartaFilterJar jakarta = JakartaFilterJar.open(); Running running = Jetty12.deploy(app, jakarta)) {
            jetty = Exchange.run(running, SEQUENCE);
        }

        assertExpected(tomcat);
        assertThat(comparable(tomcat)).as("Tomcat 9 (javax) vs Jetty 12 (jakarta)").isEqualTo(comparable(jetty));
    }

    @Test
    void aBadInitParamFailsTheDeploymentNamingFilterParamAndValueInBothContainers() throws Exception {
        WebApp app = WebApp.named("misconfigured");
        String expected =
                "filter 'search': init-param 'limit' must look like <count>/<period> (e.g. 100/1m), got '100/minutes'";

        Throwable tomcat = catchThrowable(() -> Tomcat9.deploy(app, tomcatBase).close());
        assertThat(tomcat).as("Tomcat 9 deployment").isInstanceOf(DeploymentFailed.class);
        assertThat(chain(tomcat)).as("Tomcat 9 causes").anySatisfy(t -> {
            assertThat(t).isInstanceOf(javax.servlet.ServletException.class);
            assertThat(t).hasMessage(expected);
        });

        Throwable jetty;
        try (JakartaFilterJar jakarta = JakartaFilterJar.open()) {
            jetty = catchThrowable(() -> Jetty12.deploy(app, jakarta).close());
        }
        assertThat(jetty).as("Jetty 12 deployment").isInstanceOf(DeploymentFailed.class);
        assertThat(chain(jetty)).as("Jetty 12 causes").anySatisfy(t -> {
            assertThat(t).isInstanceOf(jakarta.servlet.ServletException.class);
            assertThat(t).hasMessage(expected);
        });
    }

    /** The Tomcat 9 run, value by value. */
    private static void assertExpected(List<Exchange> run) {
        assertThat(run).hasSize(SEQUENCE.size());
        Exchange health = run.get(0);
        assertThat(health.status()).isEqualTo(200);
        assertThat(health.body()).isEqualTo("ok");
        assertThat(health.headers()).as("an unmapped path gets no rate-limit headers").isEmpty();

        // 5 per minute: one token every 12 s.
        for (int i = 1; i <= 5; i++) {
            Exchange allowed = run.get(i);
            int remaining = 5 - i;
            assertThat(allowed.status()).as(allowed.request()).isEqualTo(200);
            assertThat(allowed.body()).isEqualTo("ok");
            assertThat(allowed.headers()).as(allowed.request()).containsEntry("RateLimit-Limit", "5")
                    .containsEntry("RateLimit-Remaining", Integer.toString(remaining))
                    .containsEntry("RateLimit-Reset", "12")
                    .containsEntry("RateLimit-Policy", "\"api\";q=5;w=60")
                    .containsEntry("RateLimit", "\"api\";r=" + remaining + ";t=12")
                    .doesNotContainKey("Retry-After");
        }
        Exchange rejected = run.get(6);
        assertThat(rejected.status()).isEqualTo(429);
        assertThat(rejected.headers()).containsEntry("Retry-After", "12").containsEntry("RateLimit-Limit", "5")
                .containsEntry("RateLimit-Remaining", "0").containsEntry("RateLimit-Reset", "12")
                .containsEntry("RateLimit", "\"api\";r=0;t=12");
        assertThat(rejected.contentType()).startsWith("application/problem+json");
        assertThat(rejected.body()).contains("\"status\":429", "\"policy\":\"api\"", "retry after 12 s")
                .doesNotContain("ok");

        Exchange otherKey = run.get(7);
        assertThat(otherKey.status()).as("another API key has its own budget").isEqualTo(200);
        assertThat(otherKey.headers()).containsEntry("RateLimit-Remaining", "4");

        for (int i = 8; i <= 9; i++) {
            Exchange allowed = run.get(i);
            assertThat(allowed.status()).as(allowed.request()).isEqualTo(200);
            assertThat(allowed.headers()).as("draft headers only").containsOnlyKeys("RateLimit-Policy", "RateLimit")
                    .containsEntry("RateLimit-Policy", "\"search.v1\";q=2;w=60");
            assertThat(allowed.headers().get("RateLimit")).startsWith("\"search.v1\";r=" + (9 - i) + ";t=");
        }
        Exchange searchRejected = run.get(10);
        assertThat(searchRejected.status()).isEqualTo(429);
        assertThat(searchRejected.headers()).containsEntry("Retry-After", "60")
                .containsEntry("RateLimit", "\"search.v1\";r=0;t=60");
        assertThat(searchRejected.body()).contains("\"policy\":\"search.v1\"");
    }

    /** What must be identical: everything but the servlet's own 200 body, which is "ok" in both anyway. */
    private static List<Object> comparable(List<Exchange> run) {
        List<Object> out = new ArrayList<>();
        for (Exchange e : run) {
            out.add(List.of(e.request(), e.status(), e.headers(), String.valueOf(e.contentType()),
                    e.status() == 200 ? "" : e.body()));
        }
        return out;
    }

    private static List<Throwable> chain(Throwable t) {
        List<Throwable> all = new ArrayList<>();
        collect(t, all);
        return all;
    }

    private static void collect(Throwable t, List<Throwable> into) {
        if (t == null || into.contains(t)) {
            return;
        }
        into.add(t);
        collect(t.getCause(), into);
        for (Throwable suppressed : t.getSuppressed()) {
            collect(suppressed, into);
        }
    }
}
