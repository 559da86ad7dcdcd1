package dev.sluice.spring.boot;

import dev.sluice.web.internal.ApplicationPolicies;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Sluice in a Spring Boot reactive (WebFlux) application, when {@code sluice-webflux} is on the
 * class path: one {@code dev.sluice.webflux.RateLimitWebFilter} bean per
 * {@code sluice.filters.<name>}, read exactly as the servlet auto-configuration reads them (its
 * parameters, {@code url-patterns} as servlet url-patterns, default {@code /*}, the application's
 * {@code sluice.<parameter>} properties as every filter's defaults), ordered right after Spring
 * Security's filter chain; and the application's {@code dev.sluice.web.PolicyRegistry}, a bean, in
 * which the filters list their policies. A property that is no Sluice parameter, or a bad value,
 * stops start-up with the property's name and the value. Nothing loads in a servlet application.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(name = {"org.springframework.web.server.WebFilter", "dev.sluice.webflux.RateLimitWebFilter"})
public final class SluiceReactiveAutoConfiguration {

    /** Created by Spring Boot. */
    public SluiceReactiveAutoConfiguration() {
    }

    @Bean
    SluiceSettings sluiceSettings(Environment environment) {
        return SluiceSettings.read(environment);
    }

    /** The application's policy registry, which every filter is given. */
    @Bean
    ApplicationPolicies sluicePolicyRegistry() {
        return new ApplicationPolicies();
    }

    /** Registers the filters' beans, one per {@code sluice.filters.<name>}, before any bean is made. */
    @Bean
    static BeanDefinitionRegistryPostProcessor sluiceWebFilters(Environment environment) {
        return new WebFilterRegistrations(environment);
    }
}
