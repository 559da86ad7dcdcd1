package dev.sluice.spring.boot;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sluice.*} as Spring users write it, in a started application: every relaxed form Spring
 * documents binds (kebab case, camel case, environment variables), every name that is none of
 * Sluice's stops start-up naming it with the right spelling, and Spring Boot's failure report says
 * which property, which value, where it was set and what to do.
 */
@ExtendWith(OutputCaptureExtension.class)
class PropertiesTest {

    /** charge=after with charge-when=401, written both ways: only 401s are charged. */
    @ParameterizedTest
    @ValueSource(strings = {"sluice.filters.api.chargeWhen=401", "sluice.filters.api.charge-when=401"})
    void environmentVariablesAndEveryRelaxedFormBind(String chargeWhen) {
        Map<String, String> env = Map.of("SLUICE_TRUSTEDPROXIES", "10.0.0.0/8",
                "SLUICE_FILTERS_API_FAILUREMODE", "closed", "SLUICE_FILTERS_API_LIMIT", "1/1m",
                "SLUICE_FILTERS_API_URLPATTERNS", "/api/*");
        // A policy of its own: the in-memory store lives as long as any application of this JVM uses it.
        String policy = "relaxed-" + System.nanoTime();
        try (ConfigurableApplicationContext app = BootApps.start(env, "sluice.filters.api.charge=after", chargeWhen,
                "sluice.filters.api.policy=" + policy)) {
            SluiceSettings settings = app.getBean(SluiceSettings.class);
            assertThat(settings.application()).containsEntry("trusted-proxies", "10.0.0.0/8");
            SluiceSettings.FilterSettings api = settings.filters().get(0);
            assertThat(api.name()).isEqualTo("api");
            assertThat(api.parameters()).containsEntry("failure-mode", "closed").containsEntry("limit", "1/1m")
                    .containsEntry("charge", "after").containsEntry("charge-when", "401");
            assertThat(api.urlPatterns()).containsExactly("/api/*");

            Http http = new Http(BootApps.port(app));
            for (int i = 0; i < 3; i++) {
                assertThat(http.get("/api/200").statusCode()).as("a 200 is not charged").isEqualTo(200);
            }
            assertThat(http.get("/api/401").statusCode()).isEqualTo(401);
            assertThat(http.get("/api/200").statusCode()).as("the 401 spent the budget").isEqualTo(429);
        }
    }

    @Test
    void anEnvironmentVariableSpringReadsAsAnotherNameStopsStartUpWithTheRightSpelling(CapturedOutput output) {
        // Spring reads SLUICE_FAILURE_MODE as sluice.failure.mode: not failure-mode, whose variable is
        // SLUICE_FAILUREMODE. Ignored, it would leave every route failing open while the operator
        // believes it fails closed.
        Throwable thrown = BootApps.failure(Map.of("SLUICE_FAILURE_MODE", "closed"),
                "sluice.filters.api.limit=10/1m");
        assertThat(thrown).isNotNull();
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.failure.mode' is not a Sluice parameter")
                .contains("did you mean 'sluice.failure-mode'");
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START")
                .contains("Property: sluice.failure.mode").contains("Value: \"closed\"")
                .contains("SLUICE_FAILURE_MODE")
                .contains("Rename 'sluice.failure.mode' to 'sluice.failure-mode' "
                        + "(as an environment variable: SLUICE_FAILUREMODE)");
    }

    @Test
    void aMisspeltGroupStopsStartUpNamingIt() {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filter.api.limit=10/1m");
        assertThat(BootApps.messages(thrown)).contains("property 'sluice.filter.api.limit' is not a Sluice parameter")
                .contains("did you mean 'sluice.filters.api.limit'");
    }

    @Test
    void aMisspeltFilterParameterInCamelCaseStopsStartUp() {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filters.api.limit=10/1m",
                "sluice.filters.api.failureMod=closed");
        assertThat(BootApps.messages(thrown)).contains("is not a Sluice parameter")
                .contains("did you mean 'sluice.filters.api.failure-mode'");
    }

    @Test
    void aBadValueEndsInTheFailureReportWithPropertyValueAndFix(CapturedOutput output) {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filters.api.limit=100/minutes");
        assertThat(thrown).isNotNull();
        assertThat(output.getOut() + output.getErr()).contains("APPLICATION FAILED TO START")
                .contains("property 'sluice.filters.api.limit' must look like <count>/<period>")
                .contains("Property: sluice.filters.api.limit").contains("Value: \"100/minutes\"")
                .contains("Give 'sluice.filters.api.limit' a value");
    }

    @Test
    void aStorePasswordIsMaskedInTheFailureReport(CapturedOutput output) {
        Throwable thrown = BootApps.failure(Map.of(), "sluice.filters.api.limit=10/1m",
                "sluice.stor=redis://app:s3cret-pw@127.0.0.1:1");
        assertThat(BootApps.messages(thrown)).contains("did you mean 'sluice.store'").doesNotContain("s3cret-pw");
        assertThat(output.getOut() + output.getErr()).contains("Property: sluice.stor").doesNotContain("s3cret-pw");
    }
}
