package dev.sluice.gateway;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;

import static org.assertj.core.api.Assertions.assertThat;

/** Without Spring Cloud Gateway on the class path the auto-configuration adds nothing, and starts. */
class GatewayAbsentTest {

    @Test
    void withoutTheGatewayNothingLoads() {
        new ApplicationContextRunner()
                .withClassLoader(new FilteredClassLoader(AbstractRateLimiter.class))
                .withConfiguration(AutoConfigurations.of(SluiceGatewayAutoConfiguration.class))
                .withPropertyValues("sluice.gateway.limit=not-checked-without-a-gateway")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).doesNotHaveBean(SluiceRateLimiter.class);
                    assertThat(context).doesNotHaveBean("sluiceGatewayStore");
                });
    }
}
