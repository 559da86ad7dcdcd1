package dev.sluice.spring.boot;

import dev.sluice.web.internal.ApplicationPolicies;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.config.MeterFilter;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Every bean the starter defines gives way to the application's own of the same type (or name). */
class BackOffTest {

    private final WebApplicationContextRunner app = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
            .withPropertyValues("sluice.filters.api.limit=10/1m");

    @Test
    void theStartersBeansAreThereByDefault() {
        app.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(SluiceSettings.class).hasSingleBean(ApplicationPolicies.class)
                    .hasSingleBean(FilterRegistrations.class).hasSingleBean(RateLimitInterceptor.class)
                    .hasSingleBean(SharedStoreHealth.class).hasBean("sluiceWebMvcConfigurer")
                    .hasBean("sluiceHandlerGuards").hasSingleBean(PolicyMeterTags.class);
        });
    }

    @Test
    void theApplicationsBeansReplaceThem() {
        ApplicationPolicies own = new ApplicationPolicies();
        SluiceSettings settings = SluiceSettings.of(Map.of(), List.of());
        HealthIndicator health = () -> Health.up().withDetail("own", true).build();
        MeterFilter ownTags = MeterFilter.commonTags(List.of(Tag.of("team", "own")));
        app.withBean(ApplicationPolicies.class, () -> own)
                .withBean(SluiceSettings.class, () -> settings)
                .withBean("sluiceHealthIndicator", HealthIndicator.class, () -> health)
                .withBean("sluiceWebMvcConfigurer", WebMvcConfigurer.class, () -> new WebMvcConfigurer() { })
                .withBean("sluiceMeterTags", MeterFilter.class, () -> ownTags)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(ApplicationPolicies.class)).isSameAs(own);
                    assertThat(context.getBean(SluiceSettings.class)).isSameAs(settings);
                    assertThat(context).doesNotHaveBean(SharedStoreHealth.class);
                    assertThat(context.getBean("sluiceHealthIndicator")).isSameAs(health);
                    assertThat(context.getBean("sluiceWebMvcConfigurer")).isNotInstanceOf(RateLimitInterceptor.class);
                    assertThat(context).doesNotHaveBean(PolicyMeterTags.class);
                    assertThat(context.getBean("sluiceMeterTags")).isSameAs(ownTags);
                });
    }
}
