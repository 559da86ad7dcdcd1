package dev.sluice.spring.boot;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.web.internal.ApplicationPolicies;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

import java.util.function.Function;

/**
 * The health contributor, the Actuator endpoint {@code sluice} and the policies' meter tags, the
 * same in a servlet and in a reactive application: both auto-configurations import these, each
 * with its own {@link SluiceSettings}, policy registry and owners of limiters ({@link StoreCircuits}).
 */
final class SluiceManagement {

    private SluiceManagement() {
    }

    /**
     * The health of the shared stores, with Spring Boot's health module: the circuits of the limiters
     * on each, and a {@code PING} of a store on Redisson when Redisson is on the class path;
     * {@code management.health.sluice.enabled=false} switches it off.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @ConditionalOnEnabledHealthIndicator("sluice")
    static class StoreHealth {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(name = "sluiceHealthIndicator")
        SharedStoreHealth sluiceHealthIndicator(SluiceSettings settings, ObjectProvider<StoreCircuits> owners,
                                                ObjectProvider<StoreBinding> stores) {
            stores.forEach(StoreBinding::bind);
            // Read when asked: the filters and handlers' limiters are built after this bean.
            return new SharedStoreHealth(settings.stores(), () -> owners.orderedStream()
                    .flatMap(owner -> owner.circuits().stream()).toList(), settings.downWhenFailingOpen(),
                    storePing(SluiceManagement.class.getClassLoader()));
        }

        /**
         * {@link RedissonPing#ping} when both Redisson and Sluice's Redis stores are on
         * {@code loader}'s class path, else a ping that pings nothing: an application may use
         * Redisson for something else with Sluice on Postgres, and the ping's class names
         * {@code RedisStore}.
         */
        static Function<RateLimitStore, String> storePing(ClassLoader loader) {
            return ClassUtils.isPresent("org.redisson.api.RedissonClient", loader)
                    && ClassUtils.isPresent("dev.sluice.redis.RedisStore", loader) ? RedissonPing::ping : store -> null;
        }
    }

    /**
     * The tags of {@code sluice.meter-tags.<policy>.<tag>} on each policy's meters, with Micrometer: a
     * {@code MeterFilter} bean, which Spring Boot applies to the application's registries before
     * any meter is registered. An application's bean named {@code sluiceMeterTags} replaces it.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.config.MeterFilter")
    static class MeterTags {

        @Bean
        @ConditionalOnMissingBean(name = "sluiceMeterTags")
        PolicyMeterTags sluiceMeterTags(SluiceSettings settings) {
            return new PolicyMeterTags(settings.meterTags());
        }
    }

    /** The Actuator endpoint {@code sluice}, when Actuator is there and the application makes it available. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
    static class Actuator {

        @Bean
        @ConditionalOnMissingBean
        @ConditionalOnAvailableEndpoint(SluiceEndpoint.class)
        SluiceEndpoint sluiceEndpoint(ApplicationPolicies policies) {
            return new SluiceEndpoint(policies);
        }
    }
}
