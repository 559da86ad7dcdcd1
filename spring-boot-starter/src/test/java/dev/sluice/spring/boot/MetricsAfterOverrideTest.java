package dev.sluice.spring.boot;

import dev.sluice.spring.boot.demo.DemoApplication;
import dev.sluice.testing.TestRedis;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.net.http.HttpResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gauges of a policy after an operator overrode its limit, in the demo application on embedded
 * Tomcat and a Redis store of its own: the meters are the ones the limiter deciding now writes to,
 * registered once (no "already registered" from Micrometer), so that with Redis stopped
 * {@code sluice.store.circuit} shows the circuit the endpoint shows open.
 */
@SpringBootTest(classes = DemoApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"management.endpoints.web.exposure.include=sluice,metrics",
                "sluice.filters.quota.limit=2/1m", "sluice.filters.quota.url-patterns=/quota/*"})
@ExtendWith(OutputCaptureExtension.class)
class MetricsAfterOverrideTest {

    private static final TestRedis REDIS = TestRedis.start();
    /** Requests while Redis is stopped, at most: the circuit opens after five failures in a row. */
    private static final int MAX_REQUESTS = 60;

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    @DynamicPropertySource
    static void store(DynamicPropertyRegistry properties) {
        properties.add("sluice.store", REDIS::url);
    }

    @AfterAll
    static void stopRedis() {
        REDIS.stop();
    }

    private double gauge(String name, String policy) {
        return meters.get(name).tag("policy", policy).gauge().value();
    }

    @Test
    void afterAnOverrideTheGaugesFollowTheLimiterDecidingNow(CapturedOutput output) {
        Http http = new Http(port);
        assertThat(http.get("/quota/a").statusCode()).isEqualTo(404); // no such page, but let through: decided
        assertThat(gauge("sluice.store.circuit", "quota")).isEqualTo(0.0);

        HttpResponse<String> set = http.postJson("/actuator/sluice/quota", "{\"limit\":\"50/1m\"}", "alice",
                "alice-secret");
        assertThat(set.statusCode()).isEqualTo(200);
        assertThat(set.body()).contains("\"effective\":{\"limit\":\"50/1m\"");
        assertThat(http.get("/quota/a").statusCode()).isEqualTo(404);
        assertThat(output.getAll()).doesNotContain("already registered");
        assertThat(gauge("sluice.store.circuit", "quota")).isEqualTo(0.0);
        assertThat(gauge("sluice.leases.active", "quota")).as("a rate policy holds no leases").isEqualTo(0.0);

        REDIS.stop();
        boolean open = false;
        for (int i = 0; i < MAX_REQUESTS && !open; i++) {
            http.get("/quota/a"); // failure-mode=open: let through while Redis is down
            open = http.get("/actuator/sluice/quota").body().contains("\"circuit\":\"open\"");
        }
        assertThat(open).as("the endpoint shows the circuit open after %d requests", MAX_REQUESTS).isTrue();
        // Redis stays stopped, so the circuit cannot close again: open, or half-open with a probe out.
        assertThat(gauge("sluice.store.circuit", "quota")).as("sluice.store.circuit{policy=quota}")
                .isIn(1.0, 0.5);
        HttpResponse<String> metric = http.get("/actuator/metrics/sluice.store.circuit?tag=policy:quota");
        assertThat(metric.body()).containsAnyOf("\"value\":1.0", "\"value\":0.5");
        assertThat(gauge("sluice.leases.active", "quota")).isEqualTo(0.0);
        assertThat(output.getAll()).doesNotContain("already registered");
    }
}
