package dev.sluice.gateway;

import dev.sluice.spi.RateLimitStore;
import dev.sluice.spi.StoreProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Provides the bean {@code sluiceRateLimiter}, a {@link SluiceRateLimiter}, when Spring Cloud
 * Gateway (server WebFlux) is on the class path and the application has no
 * {@link SluiceRateLimiter} of its own. Its defaults are the {@code sluice.gateway.*} properties:
 * {@code limit}, {@code algorithm}, {@code burst}, {@code cost}, {@code failure-mode},
 * {@code timeout}, {@code headers}, as a route's {@code sluice-rate-limiter.*} arguments (see
 * {@link SluiceRateLimiter.Config}), and {@code store}: {@code memory} (the default),
 * {@code redis://host:port[/db]}, {@code rediss://...} or {@code redisson:PATH}, opened at
 * start-up (a store that does not answer is the failure mode's business, not start-up's) and
 * closed with the application. An unknown {@code sluice.gateway.*} name or a bad value stops
 * start-up, naming the property and the value.
 *
 * <p>It runs before the gateway's own auto-configuration, so that when this is the application's
 * only gateway rate limiter, the {@code RequestRateLimiter} filter exists and uses it by default.
 */
@AutoConfiguration(before = GatewayAutoConfiguration.class)
@ConditionalOnClass(AbstractRateLimiter.class)
public class SluiceGatewayAutoConfiguration {

    /** The prefix of the properties read here. */
    static final String PREFIX = "sluice.gateway";
    /** The names of {@code sluice.gateway.*} properties; any other stops start-up. */
    static final Set<String> NAMES =
            Set.of("limit", "algorithm", "burst", "cost", "failure-mode", "timeout", "headers", "store");

    /** Creates the auto-configuration; Spring Boot does. */
    public SluiceGatewayAutoConfiguration() {
    }

    /**
     * The store of {@code sluice.gateway.store}, closed with the application.
     *
     * @throws IllegalArgumentException naming {@code sluice.gateway.store} and its value (a password
     *                                  in it written {@code ***})
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(name = "sluiceGatewayStore")
    RateLimitStore sluiceGatewayStore(Environment environment) {
        String store = properties(environment).getOrDefault("store", "memory").trim();
        try {
            return StoreProvider.forStore(store).open(store);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("property '" + PREFIX + ".store' " + strip("store", e.getMessage()));
        }
    }

    /**
     * The gateway rate limiter of the {@code sluice.gateway.*} defaults.
     *
     * @throws IllegalArgumentException naming the property and its value
     */
    @Bean
    @ConditionalOnMissingBean(SluiceRateLimiter.class)
    SluiceRateLimiter sluiceRateLimiter(@Qualifier("sluiceGatewayStore") RateLimitStore store,
                                        ConfigurationService configurationService, Environment environment) {
        Map<String, String> properties = properties(environment);
        SluiceRateLimiter.Config defaults = new SluiceRateLimiter.Config()
                .setLimit(properties.get("limit"))
                .setAlgorithm(properties.get("algorithm"))
                .setBurst(properties.get("burst"))
                .setCost(properties.get("cost"))
                .setFailureMode(properties.get("failure-mode"))
                .setTimeout(properties.get("timeout"))
                .setHeaders(properties.get("headers"));
        return new SluiceRateLimiter(store, defaults, configurationService);
    }

    /** The {@code sluice.gateway.*} values by name; an unknown name stops start-up. */
    static Map<String, String> properties(Environment environment) {
        Map<String, String> properties = Binder.get(environment)
                .bind(PREFIX, Bindable.mapOf(String.class, String.class)).orElse(Map.of());
        Set<String> unknown = new TreeSet<>(properties.keySet());
        unknown.removeAll(NAMES);
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("property '" + PREFIX + "." + unknown.iterator().next()
                    + "' is not one of " + PREFIX + ".{" + String.join(",", new TreeSet<>(NAMES)) + "}");
        }
        return properties;
    }

    private static String strip(String name, String message) {
        return message.startsWith("'" + name + "' ") ? message.substring(name.length() + 3) : message;
    }

}
