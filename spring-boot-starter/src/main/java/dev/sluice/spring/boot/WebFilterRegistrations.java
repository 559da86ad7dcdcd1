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
import org.springframework.util.ClassUtils;

import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * One {@link RateLimitWebFilter} bean per {@code sluice.filters.<name>} of a reactive application,
 * named {@code sluice.filters.<name>}: the same {@link SluiceSettings} as the servlet filters',
 * each filter's parameters falling back on the application's {@code sluice.<parameter>}, with the
 * same {@link FilterExtras} ({@code exclude}, the Actuator's paths, expressions, resolver beans).
 * {@code tier=role} needs Spring Security, whose {@code Authentication} holds the roles on WebFlux:
 * without it, start-up stops naming the property. Each bean closes its limiter (releasing the
 * shared store) when the context closes.
 */
final class WebFilterRegistrations implements BeanDefinitionRegistryPostProcessor {

    private static final Logger LOG = LoggerFactory.getLogger(WebFilterRegistrations.class);

    private static final String SECURITY_AUTHENTICATION = "org.springframework.security.core.Authentication";

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
                    () -> filter(settings, f, beans, SluiceAutoConfiguration.managementPaths(environment, null)));
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
                                     ListableBeanFactory beans, List<String> managementPaths) {
        Function<String, String> lookup = name -> {
            String own = f.parameters().get(name);
            return own != null ? own : settings.application().get(name);
        };
        requireRoles(settings, f, lookup.apply("tier"), beans);
        // Before the limiter acquires its store: the application's own client may serve it.
        beans.getBeanProvider(StoreBinding.class).forEach(StoreBinding::bind);
        FilterExtras extras = FilterExtras.of(settings, f, SluiceAutoConfiguration.resolvers(beans), managementPaths);
        HttpLimiter limiter;
        try {
            HttpLimiter.Builder builder = HttpLimiter.builder("filter '" + f.name() + "'").name(f.name())
                    .parameters(lookup).meterRegistry(SluiceAutoConfiguration.meterRegistry(beans).get())
                    .registry(beans.getBean(ApplicationPolicies.class));
            if (extras.keyResolver() != null) {
                builder.keyResolver(extras.keyResolver());
            }
            if (extras.limitResolver() != null) {
                builder.limitResolver(extras.limitResolver());
            }
            limiter = builder.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("Sluice filter '" + f.name() + "': " + settings.describe(e.getMessage(), f),
                    e);
        }
        try {
            RateLimitWebFilter filter = new RateLimitWebFilter(limiter, f.urlPatterns());
            if (extras.inspects()) {
                filter = filter.skipping((exchange, view) -> extras.skips(view,
                        exchange.getRequest().getPath().pathWithinApplication().value()));
            }
            LOG.info("Sluice filter '{}': {}", f.name(), filter);
            return filter;
        } catch (IllegalArgumentException e) {
            limiter.close();
            throw new IllegalStateException("Sluice filter '" + f.name() + "': property '"
                    + f.property(SluiceSettings.URL_PATTERNS) + e.getMessage().substring("'url-patterns'".length()),
                    e);
        }
    }

    /**
     * Stops start-up when {@code tier} is {@code role} without Spring Security: WebFlux has no
     * {@code isUserInRole}, the roles are those of Spring Security's {@code Authentication}.
     */
    private static void requireRoles(SluiceSettings settings, SluiceSettings.FilterSettings f, String tier,
                                     ListableBeanFactory beans) {
        if (tier == null || !tier.trim().toLowerCase(Locale.ROOT).equals("role")) {
            return;
        }
        ClassLoader loader = beans instanceof ConfigurableListableBeanFactory factory
                && factory.getBeanClassLoader() != null ? factory.getBeanClassLoader()
                : WebFilterRegistrations.class.getClassLoader();
        if (!ClassUtils.isPresent(SECURITY_AUTHENTICATION, loader)) {
            throw settings.failure("Sluice filter '" + f.name() + "': " + settings.describe("'tier' is role, "
                    + "which a WebFlux application reads from Spring Security's Authentication, and Spring "
                    + "Security is not on the class path: add spring-security-core (or "
                    + "spring-boot-starter-security), or choose attribute:NAME or header:NAME", f), f, null);
        }
    }
}
