package dev.sluice.spring.boot;

import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.internal.ApplicationPolicies;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

import java.util.List;
import java.util.function.Supplier;

/**
 * Sluice in a Spring Boot servlet application (and nowhere else: nothing loads in a WebFlux or
 * non-web application).
 *
 * <ul>
 *   <li>one {@link RateLimitFilter} per {@code sluice.filters.<name>} ({@link SluiceProperties}), its
 *       parameters the filter's init-params ({@code limit}, {@code key}, {@code methods}, ...) plus
 *       {@code url-patterns} (default {@code /*}), {@code exclude} and the {@code KeyResolver} /
 *       {@code LimitResolver} beans it names, mapped right after Spring Security's filter chain (so
 *       that {@code principal} and {@code attribute:} keys see the signed-in user); the application's
 *       {@code sluice.<parameter>} properties are every filter's defaults, as context-params are
 *       in {@code web.xml}; a filter mapped to {@code /*} leaves the Actuator's paths alone;
 *   <li>{@code @dev.sluice.jaxrs.RateLimit} on Spring MVC handler methods and controllers, with
 *       the application's {@code sluice.*} settings;
 *   <li>{@code @RateLimit} on the public methods of the application's other beans, one budget per
 *       method, a refused call throwing {@code RateLimitExceededException} (with the JAX-RS API on the
 *       class path);
 *   <li>metrics ({@code sluice.metrics}, on by default) on the application's {@code MeterRegistry}, with
 *       each policy's tags of {@code sluice.meter-tags.<policy>.<tag>} (a {@code MeterFilter} bean);
 *   <li>a health contributor {@code sluice} for the Redis stores, with Spring Boot's health module;
 *   <li>the application's {@code dev.sluice.web.PolicyRegistry}, a bean, in which the filters and the
 *       {@code @RateLimit} handlers list their policies, and with Actuator, the endpoint {@code sluice}
 *       over it (exposed only when the application includes it, as Actuator's other endpoints).
 * </ul>
 *
 * A {@code sluice.*} name that is no Sluice setting, in any relaxed form, or a bad value stops
 * start-up; {@link SluiceFailureAnalyzer} reports the property, the value and the fix. Every bean
 * gives way to the application's own; the application's {@code RedissonClient} bean, when there is
 * one, serves the Redis stores; its Spring Data Redis {@code LettuceConnectionFactory} serves the
 * {@code lettuce:} stores, and the Redis ones when Redisson is not on the class path.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = {"jakarta.servlet.Filter", "dev.sluice.servlet.RateLimitFilter"})
@EnableConfigurationProperties(SluiceProperties.class)
@Import({SluiceManagement.StoreHealth.class, SluiceManagement.Actuator.class, SluiceManagement.MeterTags.class})
public final class SluiceAutoConfiguration {

    /** Spring Security's default filter order, {@code SecurityProperties.DEFAULT_FILTER_ORDER}. */
    private static final int SECURITY_FILTER_ORDER = -100;
    private static final String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";
    private static final String ENDPOINT = "org.springframework.boot.actuate.endpoint.annotation.Endpoint";

    /** Created by Spring Boot. */
    public SluiceAutoConfiguration() {
    }

    /** The properties, checked (every {@code sluice.*} name must be a Sluice setting) and flattened. */
    @Bean
    @ConditionalOnMissingBean
    SluiceSettings sluiceSettings(SluiceProperties properties, Environment environment) {
        return SluiceSettings.of(properties, environment);
    }

    /**
     * The application's policy registry: the filters find it in the {@code ServletContext}, the
     * {@code @RateLimit} handlers and the Actuator endpoint are given it.
     */
    @Bean
    @ConditionalOnMissingBean(ApplicationPolicies.class)
    ApplicationPolicies sluicePolicyRegistry() {
        return new ApplicationPolicies();
    }

    /** The filters, mapped right after Spring Security's ({@code spring.security.filter.order}, default -100). */
    @Bean
    @ConditionalOnMissingBean
    FilterRegistrations sluiceFilters(SluiceSettings settings, Environment environment, ListableBeanFactory beans,
                                      ApplicationPolicies policies, ObjectProvider<StoreBinding> stores) {
        stores.forEach(StoreBinding::bind);
        int securityOrder = environment.getProperty("spring.security.filter.order", Integer.class,
                SECURITY_FILTER_ORDER);
        return new FilterRegistrations(settings, meterRegistry(beans), securityOrder + 1, policies,
                resolvers(beans), managementPaths(environment, "spring.mvc.servlet.path"));
    }

    /** The application's resolver beans, by name, for the properties that name them. */
    static FilterRegistrations.Resolvers resolvers(ListableBeanFactory beans) {
        return new FilterRegistrations.Resolvers() {
            @Override
            public KeyResolver keyResolver(String beanName) {
                return bean(beanName, KeyResolver.class);
            }

            @Override
            public LimitResolver limitResolver(String beanName) {
                return bean(beanName, LimitResolver.class);
            }

            private <T> T bean(String beanName, Class<T> type) {
                try {
                    return beans.getBean(beanName, type);
                } catch (BeansException e) {
                    throw new IllegalArgumentException("the application's " + type.getSimpleName() + " beans are "
                            + List.of(beans.getBeanNamesForType(type)), e);
                }
            }
        };
    }

    /**
     * The Actuator's paths on the application's server, {@code <base-path>/*}, which a filter mapped
     * to {@code /*} leaves alone; none without Actuator, or when its base path is the root.
     *
     * @param servletPathProperty the property of the path the Actuator's sits under inside the
     *                            application (Spring MVC's servlet path), {@code null}: none (WebFlux)
     */
    static List<String> managementPaths(Environment environment, String servletPathProperty) {
        if (!ClassUtils.isPresent(ENDPOINT, SluiceAutoConfiguration.class.getClassLoader())) {
            return List.of();
        }
        String base = trimSlashes(environment.getProperty("management.endpoints.web.base-path", "/actuator"));
        if (base.isEmpty()) {
            return List.of(); // every path would be the Actuator's
        }
        String servlet = servletPathProperty == null ? ""
                : trimSlashes(environment.getProperty(servletPathProperty, ""));
        return List.of((servlet.isEmpty() ? "" : "/" + servlet) + "/" + base + "/*");
    }

    private static String trimSlashes(String path) {
        String p = path.trim();
        while (p.startsWith("/")) {
            p = p.substring(1);
        }
        while (p.endsWith("/")) {
            p = p.substring(0, p.length() - 1);
        }
        return p;
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
        @ConditionalOnMissingBean
        RateLimitInterceptor sluiceRateLimitInterceptor(SluiceSettings settings, ListableBeanFactory beans,
                                                        ApplicationPolicies policies,
                                                        ObjectProvider<StoreBinding> stores) {
            stores.forEach(StoreBinding::bind);
            return new RateLimitInterceptor(settings, meterRegistry(beans), policies, resolvers(beans));
        }

        @Bean
        @ConditionalOnMissingBean(name = "sluiceWebMvcConfigurer")
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
        @ConditionalOnMissingBean(name = "sluiceHandlerGuards")
        SmartInitializingSingleton sluiceHandlerGuards(RateLimitInterceptor interceptor,
                                                       ObjectProvider<RequestMappingHandlerMapping> mappings) {
            return () -> mappings.forEach(mapping -> {
                for (HandlerMethod handler : mapping.getHandlerMethods().values()) {
                    interceptor.guard(handler);
                }
            });
        }
    }

    /**
     * {@code @RateLimit} on the public methods of the application's other beans (services): needs the
     * JAX-RS API (not a JAX-RS runtime) on the class path, for the exception a refused call throws.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"jakarta.ws.rs.ClientErrorException",
            "org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor"})
    static class Methods {

        /** Static, as a post-processor must be; what it needs is looked up when the first annotated bean is made. */
        @Bean
        @ConditionalOnMissingBean(name = "sluiceRateLimitedMethods")
        static RateLimitedMethods sluiceRateLimitedMethods(ObjectProvider<SluiceSettings> settings,
                                                           ObjectProvider<ApplicationPolicies> policies,
                                                           ObjectProvider<StoreBinding> stores,
                                                           ListableBeanFactory beans) {
            return new RateLimitedMethods(new MethodLimits(() -> {
                stores.forEach(StoreBinding::bind);
                return settings.getObject();
            }, meterRegistry(beans), policies::getObject));
        }
    }

    /**
     * The application's {@code RedissonClient} bean, when it has one, serves Sluice's Redis stores:
     * no second client, and never shut down by Sluice.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.redisson.api.RedissonClient", "dev.sluice.redis.RedisStore"})
    static class ApplicationRedisson {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(name = "sluiceRedissonClientStores")
        RedissonClientStores sluiceRedissonClientStores(SluiceSettings settings,
                                                        ObjectProvider<org.redisson.api.RedissonClient> client) {
            return new RedissonClientStores(settings.stores(), client::getIfUnique);
        }
    }

    /**
     * The application's Spring Data Redis connection factory, when it is Lettuce's, serves Sluice's
     * {@code lettuce:} stores, and its {@code redis://} ones when Redisson is not on the class path:
     * on the factory's own client, with no Redisson and no second pool, never shut down by Sluice.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory",
            "io.lettuce.core.RedisClient", "dev.sluice.redis.LettuceStore"})
    static class ApplicationLettuce {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(name = "sluiceLettuceFactoryStores")
        LettuceFactoryStores sluiceLettuceFactoryStores(SluiceSettings settings,
                ObjectProvider<org.springframework.data.redis.connection.RedisConnectionFactory> factory) {
            boolean redisson = ClassUtils.isPresent("org.redisson.api.RedissonClient",
                    SluiceAutoConfiguration.class.getClassLoader());
            return new LettuceFactoryStores(settings.stores(), factory::getIfUnique, redisson);
        }
    }
}
