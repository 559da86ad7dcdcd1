package dev.sluice.spring.boot;

import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.web.internal.ApplicationPolicies;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.ServletContextInitializer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Sluice in a Spring Boot servlet application (and nowhere else: nothing loads in a WebFlux or
 * non-web application).
 *
 * <ul>
 *   <li>one {@link RateLimitFilter} per {@code sluice.filters.<name>}, its parameters the filter's
 *       init-params ({@code limit}, {@code key}, {@code methods}, ...) plus {@code url-patterns}
 *       (default {@code /*}), mapped right after Spring Security's filter chain (so that
 *       {@code principal} and {@code attribute:} keys see the signed-in user); the application's
 *       {@code sluice.<parameter>} properties are every filter's defaults, as context-params are
 *       in {@code web.xml};
 *   <li>{@code @dev.sluice.jaxrs.RateLimit} on Spring MVC handler methods and controllers, with
 *       the application's {@code sluice.*} settings;
 *   <li>metrics ({@code sluice.metrics}, on by default) on the application's {@code MeterRegistry};
 *   <li>a health contributor {@code sluice} for the Redis stores, with Spring Boot's health module;
 *   <li>the application's {@code dev.sluice.web.PolicyRegistry}, a bean, in which the filters and the
 *       {@code @RateLimit} handlers list their policies, and with Actuator, the endpoint {@code sluice}
 *       over it (exposed only when the application includes it, as Actuator's other endpoints).
 * </ul>
 *
 * A property that is no Sluice parameter, or a bad value, stops start-up with the property's name
 * and the value.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = {"jakarta.servlet.Filter", "dev.sluice.servlet.RateLimitFilter"})
public final class SluiceAutoConfiguration {

    /** Spring Security's default filter order, {@code SecurityProperties.DEFAULT_FILTER_ORDER}. */
    private static final int SECURITY_FILTER_ORDER = -100;
    private static final String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";

    /** Created by Spring Boot. */
    public SluiceAutoConfiguration() {
    }

    @Bean
    SluiceSettings sluiceSettings(Environment environment) {
        return SluiceSettings.read(environment);
    }

    /**
     * The application's policy registry: the filters find it in the {@code ServletContext}, the
     * {@code @RateLimit} handlers and the Actuator endpoint are given it.
     */
    @Bean
    ApplicationPolicies sluicePolicyRegistry() {
        return new ApplicationPolicies();
    }

    /** The filters, mapped right after Spring Security's ({@code spring.security.filter.order}, default -100). */
    @Bean
    FilterRegistrations sluiceFilters(SluiceSettings settings, Environment environment, ListableBeanFactory beans,
                                      ApplicationPolicies policies) {
        int securityOrder = environment.getProperty("spring.security.filter.order", Integer.class,
                SECURITY_FILTER_ORDER);
        return new FilterRegistrations(settings, meterRegistry(beans), securityOrder + 1, policies);
    }

    /** The application's {@code MeterRegistry}, looked up when needed; {@code null} without Micrometer or one. */
    static Supplier<Object> meterRegistry(ListableBeanFactory beans) {
        ClassLoader loader = SluiceAutoConfiguration.class.getClassLoader();
        if (!ClassUtils.isPresent(METER_REGISTRY, loader)) {
            return () -> null;
        }
        Class<?> type = ClassUtils.resolveClassName(METER_REGISTRY, loader);
        return () -> beans.getBeanProvider(type).getIfUnique();
    }

    /** {@code @RateLimit} on Spring MVC handlers. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.web.servlet.HandlerInterceptor")
    static class Mvc {

        @Bean(destroyMethod = "close")
        RateLimitInterceptor sluiceRateLimitInterceptor(SluiceSettings settings, ListableBeanFactory beans,
                                                        ApplicationPolicies policies) {
            return new RateLimitInterceptor(settings, meterRegistry(beans), policies);
        }

        @Bean
        WebMvcConfigurer sluiceWebMvcConfigurer(RateLimitInterceptor interceptor) {
            return new WebMvcConfigurer() {
                @Override
                public void addInterceptors(InterceptorRegistry registry) {
                    registry.addInterceptor(interceptor);
                }
            };
        }

        /** Builds every annotated handler's guard at start-up, so that a bad annotation stops it. */
        @Bean
        SmartInitializingSingleton sluiceHandlerGuards(RateLimitInterceptor interceptor,
                                                       ObjectProvider<RequestMappingHandlerMapping> mappings) {
            return () -> mappings.forEach(mapping -> {
                for (HandlerMethod handler : mapping.getHandlerMethods().values()) {
                    interceptor.guard(handler);
                }
            });
        }
    }

    /** The health of the Redis stores, with Spring Boot's health module and Sluice's Redis store. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.boot.health.contributor.HealthIndicator",
            "dev.sluice.redis.RedisStore"})
    static class StoreHealth {

        @Bean(destroyMethod = "close")
        RedisStoreHealth sluiceHealthIndicator(SluiceSettings settings, FilterRegistrations filters,
                                               ObjectProvider<RateLimitInterceptor> interceptor) {
            return new RedisStoreHealth(settings.stores(), () -> {
                List<FilterRegistrations.Circuit> all = new ArrayList<>(filters.circuits());
                interceptor.ifAvailable(i -> all.addAll(i.circuits()));
                return all;
            });
        }
    }

    /** The Actuator endpoint {@code sluice}, when Actuator is there and the application makes it available. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    static class Actuator {

        @Bean
        @ConditionalOnAvailableEndpoint(SluiceEndpoint.class)
        SluiceEndpoint sluiceEndpoint(ApplicationPolicies policies) {
            return new SluiceEndpoint(policies);
        }
    }
}
