package dev.sluice.examples;

import dev.sluice.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.UUID;

import static dev.sluice.examples.Http.get;
import static dev.sluice.examples.Http.header;
import static dev.sluice.examples.WarContract.assertRefused;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store switch, against a real Redis: the same WAR file in Jetty and in Tomcat at once, both
 * told {@code sluice.store=redis://...}, give each caller one budget between them, as two nodes
 * of one application behind a load balancer must.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SharedRedisIT {

    private Deployed jetty;
    private Deployed tomcat;

    @BeforeAll
    void deployTwice() throws Exception {
        Map<String, String> redis = Map.of("sluice.store", TestRedis.shared().url());
        jetty = JettyWar.deploy(Http.war(), "127.0.0.1", 0, redis);
        tomcat = TomcatWar.deploy(Http.war(), redis);
        get(jetty, "hello", "warm-up");
        get(tomcat, "hello", "warm-up");
        get(jetty, "api/bucket", "warm-up");
        get(tomcat, "api/bucket", "warm-up");
    }

    @AfterAll
    void undeploy() {
        if (tomcat != null) {
            tomcat.close();
        }
        if (jetty != null) {
            jetty.close();
        }
    }

    @Test
    void servletFilterBudgetIsSharedByJettyAndTomcat() {
        String key = "filter-" + UUID.randomUUID(); // Redis outlives the test run when REDIS_URL is set
        for (int i = 1; i <= 5; i++) {
            HttpResponse<String> ok = get(i % 2 == 0 ? tomcat : jetty, "hello", key);
            assertThat(ok.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(header(ok, "RateLimit-Remaining")).isEqualTo(Integer.toString(5 - i));
        }
        assertRefused(get(tomcat, "hello", key), "hello");
        assertRefused(get(jetty, "hello", key), "hello");
    }

    @Test
    void jaxrsBudgetIsSharedByJettyAndTomcat() {
        String key = "bucket-" + UUID.randomUUID();
        for (int i = 1; i <= 5; i++) {
            HttpResponse<String> ok = get(i % 2 == 0 ? tomcat : jetty, "api/bucket", key);
            assertThat(ok.statusCode()).as("request %d", i).isEqualTo(200);
            assertThat(header(ok, "RateLimit-Remaining")).isEqualTo(Integer.toString(5 - i));
        }
        assertRefused(get(jetty, "api/bucket", key), "bucket");
        assertRefused(get(tomcat, "api/bucket", key), "bucket");
    }
}
