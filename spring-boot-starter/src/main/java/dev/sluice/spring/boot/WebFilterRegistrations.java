package dev.sluice.spring.boot;

import dev.sluice.web.HttpLimiter;
import dev.sluice.web.internal.ApplicationPolicies;
import dev.sluice.webflux.RateLimitWebFilter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.core.env.Environment;

import java.util.function.Function;

/**
 * One {@link RateLimitWebFilter} bean per {@code sluice.filters.<name>} of a reactive application,
 * named {@code sluice.filters.<name>}: the same {@link SluiceSettings} as the servlet filters',
 * each filter's parameters falling back on the application's {@code sluice.<parameter>}. Each bean
 * closes its limiter (releasing the shared store) when the context closes.
 */
final class WebFilterRegistrations implements BeanDefinitionRegistryPostProcessor {

    private static final Logger LOG = LoggerFactory.getLogger(WebFilterRegistrations.class);

    private final Environment environment;

    WebFilterRegistrations(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
        SluiceSettings settings = SluiceSettings.read(environment);
        ListableBeanFactory beans = (ListableBeanFactory) registry;
        for (SluiceSettings.FilterSettings f : settings.filters()) {
            RootBeanDefinition definition = new RootBeanDefinition(RateLimitWebFilter.class,
                    () -> filter(settings, f, beans));
            definition.setDestroyMethodName("close");
            registry.registerBeanDefinition(SluiceSettings.PREFIX + SluiceSettings.FILTERS + "." + f.name(),
                    definition);
        }
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        // Everything is registered above.
    }

    /** The filter of {@code f}; a bad value stops start-up naming the property and the value. */
    static RateLimitWebFilter filter(SluiceSettings settings, SluiceSettings.FilterSettings f,
                                     ListableBeanFactory beans) {
        Function<String, String> lookup = name -> {
            String own = f.parameters().get(name);
            return own != null ? own : settings.application().get(name);
        };
        HttpLimiter limiter;
        try {
            limiter = HttpLimiter.builder("filter '" + f.name() + "'").name(f.name()).parameters(lookup)
                    .meterRegistry(SluiceAutoConfiguration.meterRegistry(beans).get())
                    .registry(beans.getBean(ApplicationPolicies.class)).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("Sluice filter '" + f.name() + "': " + settings.describe(e.getMessage(), f),
                    e);
        }
        try {
            RateLimitWebFilter filter = new RateLimitWebFilter(limiter, f.urlPatterns());
            LOG.info("Sluice filter '{}': {}", f.name(), filter);
            return filter;
        } catch (IllegalArgumentException e) {
            limiter.close();
            throw new IllegalStateException("Sluice filter '" + f.name() + "': property '"
                    + f.property(SluiceSettings.URL_PATTERNS) + e.getMessage().substring("'url-patterns'".length()),
                    e);
        }
    }
}
