package dev.sluice.spring.boot;

import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.webflux.RateLimitWebFilter;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

/**
 * Sluice in a Spring Boot reactive (WebFlux) application, when {@code sluice-webflux} is on the class
 * path: one {@code dev.sluice.webflux.RateLimitWebFilter} bean per {@code sluice.filters.<name>},
 * read exactly as the servlet auto-configuration reads them (its parameters, {@code url-patterns} as
 * servlet url-patterns, default {@code /*}, the application's {@code sluice.<parameter>} properties
 * as every filter's defaults), ordered right after Spring Security's filter chain; and the
 * application's {@code dev.sluice.web.PolicyRegistry}, a bean, in which the filters list their
 * policies. {@code @dev.sluice.jaxrs.RateLimit} on WebFlux handler methods and controllers, read as
 * on Spring MVC's, with the application's {@code sluice.*} settings ({@link RateLimitHandlerFilter}).
 * The filters take {@code exclude} (the Actuator's paths left alone by a filter of {@code /*}),
 * {@code key-expression}, {@code skip-expression} and resolver beans as in a servlet application; the
 * application's {@code RedissonClient} bean, when it has one, serves the Redis stores, and its Spring
 * Data Redis {@code LettuceConnectionFactory} the {@code lettuce:} ones (and {@code redis://} ones
 * without Redisson). With Spring Boot's health module and Sluice's Redis store, the health
 * contributor {@code sluice} ({@code management.health.sluice.enabled=false} switches it off); with
 * Actuator, the endpoint {@code sluice} over the policy registry, exposed only when the application
 * includes it: both as in a servlet application. A property that is no Sluice parameter, or a bad
 * value, stops start-up with the property's name and the value. Nothing loads in a servlet
 * application.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(name = {"org.springframework.web.server.WebFilter", "dev.sluice.webflux.RateLimitWebFilter"})
@Import({SluiceManagement.StoreHealth.class, SluiceManagement.Actuator.class, SluiceManagement.MeterTags.class,
        SluiceAutoConfiguration.ApplicationRedisson.class, SluiceAutoConfiguration.ApplicationLettuce.class})
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

    /** The filters' circuits on their stores, for the health contributor. */
    @Bean
    StoreCircuits sluiceWebFilterCircuits(SluiceSettings settings, ListableBeanFactory beans) {
        return () -> settings.filters().stream().map(f -> new FilterRegistrations.Circuit(settings.store(f),
                "filter '" + f.name() + "'", () -> beans.getBean(SluiceSettings.PREFIX + SluiceSettings.FILTERS
                        + "." + f.name(), RateLimitWebFilter.class).storeCircuitOpen(), settings.failsClosed(f)))
                .toList();
    }

    /** {@code @RateLimit} on WebFlux handlers. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping")
    static class Handlers {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        RateLimitHandlerFilter sluiceRateLimitHandlerFilter(SluiceSettings settings, ListableBeanFactory beans,
                                                            ApplicationPolicies policies,
                                                            ObjectProvider<RequestMappingHandlerMapping> mappings,
                                                            ObjectProvider<StoreBinding> stores) {
            stores.forEach(StoreBinding::bind);
            return new RateLimitHandlerFilter(new HandlerGuards(settings, SluiceAutoConfiguration.meterRegistry(beans),
                    policies, SluiceAutoConfiguration.resolvers(beans), "Spring WebFlux"), mappings);
        }

        /** Builds every annotated handler's limiter at start-up, so that a bad annotation stops it. */
        @Bean
        @ConditionalOnMissingBean(name = "sluiceHandlerGuards")
        SmartInitializingSingleton sluiceHandlerGuards(RateLimitHandlerFilter filter) {
            return filter::buildAll;
        }
    }
}
