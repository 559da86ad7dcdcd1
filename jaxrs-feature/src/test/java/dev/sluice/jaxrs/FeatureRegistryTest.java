package dev.sluice.jaxrs;

import dev.sluice.web.PolicyRegistry;
import dev.sluice.web.PolicyView;
import org.glassfish.jersey.server.ResourceConfig;
import org.junit.jupiter.api.Test;

import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every route the feature builds is in its {@link PolicyRegistry}: reset and override apply to {@code @RateLimit}
 * routes.
 */
class FeatureRegistryTest {

    @Test
    void everyAnnotatedMethodIsRegisteredAndResetAndOverrideApplyToIt() throws Exception {
        RateLimitFeature feature = new RateLimitFeature();
        PolicyRegistry policies = feature.policies();
        String client = UUID.randomUUID().toString();
        try (JerseyApp app = JerseyApp.start(new ResourceConfig(Resources.MethodLimited.class).register(feature))) {
            assertThat(policies.policies()).extracting(PolicyView::name)
                    .contains("two-minute", "two-hourly");
            assertThat(policies.policy("two-hourly").orElseThrow().routes()).hasSize(2);

            assertThat(app.get("/m/hourly", "X-Client", client).statusCode()).isEqualTo(200);
            policies.override("two-hourly", "1/1h", null, "test");
            assertThat(app.get("/m/hourly", "X-Client", client).statusCode()).isEqualTo(429);
            assertThat(policies.reset("two-hourly", client)).containsExactly("key~" + client);
            assertThat(app.get("/m/hourly", "X-Client", client).statusCode()).isEqualTo(200);
            policies.clearOverride("two-hourly", "test");
            assertThat(policies.policy("two-hourly").orElseThrow().effective().count()).isEqualTo(5);
        }
    }
}
