package dev.sluice.spring.boot;

import dev.sluice.jaxrs.RateLimit;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.reactor.netty.autoconfigure.NettyReactiveWebServerAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webflux.autoconfigure.HttpHandlerAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sluice.meter-tags.<policy>.<tag>} in a started application (embedded Tomcat, Actuator,
 * real HTTP on 127.0.0.1): every {@code sluice.*} meter of a policy carries its tags, set as
 * properties and as environment variables, over the application's common tags of the same name,
 * and no other policy's meter does; policies decided together carry the tags of each, different
 * values joined. A tag with no name or value, or one
 * that would replace Sluice's own {@code policy} tag, stops start-up in Boot's failure report.
 */
@ExtendWith(OutputCaptureExtension.class)
class MeterTagsTest {

    /** Two limits decided together: meters tagged {@code policy=burst+hourly}. */
    @RestController
    static class Reports {
        @RateLimit(limit = "50/1m", policy = "burst")
        @RateLimit(limit = "500/1h", policy = "hourly")
        @GetMapping("/reports")
        String reports() {
            return "reports\n";
        }
    }

    private static Map<String, String> tags(Meter meter) {
        return meter.getId().getTags().stream().collect(Collectors.toMap(Tag::getKey, Tag::getValue));
    }

    private static List<Meter> metersOf(MeterRegistry registry, String policy) {
        return registry.getMeters().stream().filter(m -> m.getId().getName().startsWith("sluice."))
                .filter(m -> policy.equals(m.getId().getTag("policy"))).toList();
    }

    @Test
    void aPolicysMetersCarryItsTagsAndAnotherPolicysDoNot() {
        // Policies of their own: the in-memory store lives as long as any application of this JVM uses it.
        long run = System.nanoTime();
        String tagged = "tagged" + run;
        String plain = "plain" + run;
        Map<String, String> env = Map.of("SLUICE_METERTAGS_" + tagged.toUpperCase() + "_REGION", "eu");
        try (ConfigurableApplicationContext app = BootApps.start(env, new Class<?>[] {BootApps.App.class,
                Reports.class}, "management.endpoints.web.exposure.include=metrics",
                "management.metrics.tags.team=platform", "management.metrics.tags.env=test",
                "sluice.filters.api.policy=" + tagged, "sluice.filters.api.limit=50/1m",
                "sluice.filters.api.url-patterns=/api/*",
                "sluice.filters.open.policy=" + plain, "sluice.filters.open.limit=50/1m",
                "sluice.filters.open.url-patterns=/public/*",
                "sluice.meter-tags." + tagged + ".team=payments", "sluice.meter-tags." + tagged + ".tier=gold",
                "sluice.meter-tags.burst.team=search", "sluice.meter-tags.burst.owner=ops",
                "sluice.meter-tags.hourly.team=reports", "sluice.meter-tags.hourly.owner=ops",
                "sluice.meter-tags.hourly.cost-center=42")) {
            Http http = new Http(BootApps.port(app));
            assertThat(http.get("/api/200").statusCode()).isEqualTo(200);
            assertThat(http.get("/public/a").statusCode()).isEqualTo(200);
            assertThat(http.get("/reports").statusCode()).isEqualTo(200);
            MeterRegistry registry = app.getBean(MeterRegistry.class);

            List<Meter> taggedMeters = metersOf(registry, tagged);
            assertThat(taggedMeters.stream().map(m -> m.getId().getName()).collect(Collectors.toSet()))
                    .as("the policy's meters").contains("sluice.decisions", "sluice.decision.latency",
                            "sluice.store.errors", "sluice.store.circuit", "sluice.leases.active");
            assertThat(taggedMeters).allSatisfy(m -> assertThat(tags(m)).as(m.getId().toString())
                    .containsEntry("team", "payments").containsEntry("tier", "gold").containsEntry("region", "eu")
                    .as("the application's common tags, the policy's own team winning").containsEntry("env", "test"));
            assertThat(registry.find("sluice.decisions").tags("policy", tagged, "outcome", "allowed").counter())
                    .as("the allowed request, counted on the tagged meter").isNotNull()
                    .satisfies(c -> assertThat(c.count()).isEqualTo(1.0));

            List<Meter> plainMeters = metersOf(registry, plain);
            assertThat(plainMeters).isNotEmpty().allSatisfy(m -> assertThat(tags(m)).as(m.getId().toString())
                    .containsEntry("team", "platform").containsEntry("env", "test")
                    .doesNotContainKeys("tier", "region"));
            assertThat(plainMeters).allSatisfy(m -> assertThat(tags(m).keySet()).as(m.getId().toString())
                    .isSubsetOf(Set.of("policy", "outcome", "error.type", "team", "env")));

            List<Meter> joined = metersOf(registry, "burst+hourly");
            assertThat(joined).isNotEmpty().allSatisfy(m -> assertThat(tags(m)).as(m.getId().toString())
                    .containsEntry("team", "search+reports").containsEntry("owner", "ops")
                    .containsEntry("cost-center", "42"));

            // As Actuator shows them over HTTP: the tag selects the policy's meters, and only those.
            assertThat(http.get("/actuator/metrics/sluice.decisions?tag=policy:" + tagged + "&tag=team:payments")
                    .statusCode()).isEqualTo(200);
            assertThat(http.get("/actuator/metrics/sluice.decisions?tag=policy:" + plain + "&tag=team:payments")
                    .statusCode()).as("another policy's meters have no such tag").isEqualTo(404);
        }
    }

    /** WebFlux on Reactor Netty, Micrometer's simple registry and Sluice's reactive auto-configuration. */
    @SpringBootConfiguration
    @ImportAutoConfiguration({SluiceReactiveAutoConfiguration.class, NettyReactiveWebServerAutoConfiguration.class,
            HttpHandlerAutoConfiguration.class, WebFluxAutoConfiguration.class, MetricsAutoConfiguration.class,
            SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class})
    static class Reactive {
    }

    @Test
    void aReactiveApplicationsFilterMetersCarryTheirPolicysTags() {
        long run = System.nanoTime();
        String tagged = "reactive" + run;
        String plain = "reactiveplain" + run;
        try (ConfigurableApplicationContext app = new SpringApplicationBuilder(Reactive.class)
                .web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off",
                        "spring.config.name=meter-tags", // not the demo's application.yml
                        "sluice.filters.api.policy=" + tagged, "sluice.filters.api.limit=50/1m",
                        "sluice.filters.api.url-patterns=/api/*",
                        "sluice.filters.open.policy=" + plain, "sluice.filters.open.limit=50/1m",
                        "sluice.filters.open.url-patterns=/public/*",
                        "sluice.meter-tags." + tagged + ".team=payments").run()) {
            Http http = new Http(BootApps.port(app));
            assertThat(http.get("/api/a").statusCode()).as("no such page, but decided").isEqualTo(404);
            assertThat(http.get("/public/a").statusCode()).isEqualTo(404);
            MeterRegistry registry = app.getBean(MeterRegistry.class);
            assertThat(metersOf(registry, tagged)).isNotEmpty().allSatisfy(m -> assertThat(tags(m))
                    .as(m.getId().toString()).containsEntry("team", "payments"));
            assertThat(registry.find("sluice.decisions").tags("policy", tagged, "outcome", "allowed").counter())
                    .isNotNull().satisfies(c -> assertThat(c.count()).isEqualTo(1.0));
            assertThat(metersOf(registry, plain)).isNotEmpty().allSatisfy(m -> assertThat(tags(m))
                    .as(m.getId().toString()).doesNotContainKey("team"));
        }
    }

    @Test
    void aTagNamedPolicyStopsStartUpNamingThePropertyAndTheValue(CapturedOutput output) {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filters.api.limit=10/1m",
                "sluice.meter-tags.api.policy=billing");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.meter-tags.api.policy' names the tag "
                + "'policy', which Sluice's meters carry themselves (policy, outcome, error.type), got 'billing'");
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START")
                .contains("Property: sluice.meter-tags.api.policy").contains("Value: \"billing\"")
                .contains("Rename the tag");
    }

    @Test
    void aTagWithoutANameStopsStartUp(CapturedOutput output) {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filters.api.limit=10/1m",
                "sluice.meter-tags.api[ ]=payments");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.meter-tags.api. ' must name a tag");
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START")
                .contains("Value: \"payments\"");
    }

    @Test
    void aTagWithoutAValueStopsStartUp(CapturedOutput output) {
        Throwable thrown = BootApps.failure(Map.of("SLUICE_METERTAGS_API_TEAM", ""), "sluice.filters.api.limit=10/1m");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.meter-tags.api.team' must give the tag "
                + "a value, got ''");
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START")
                .contains("Property: sluice.meter-tags.api.team").contains("SLUICE_METERTAGS_API_TEAM");
    }

    @Test
    void aMisspeltGroupStillStopsStartUpAndTheKnownNamesListMeterTags() {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filters.api.limit=10/1m",
                "sluice.meter-tag.api.team=payments");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.meter-tag.api.team' is not a Sluice "
                + "parameter").contains("sluice.meter-tags.<policy>.<tag>");
    }
}
