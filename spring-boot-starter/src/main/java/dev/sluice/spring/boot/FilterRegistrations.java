package dev.sluice.spring.boot;

import dev.sluice.servlet.RateLimitFilter;
import dev.sluice.servlet.internal.ServletRequestView;
import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.PolicyRegistry;
import dev.sluice.web.internal.ApplicationPolicies;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.web.servlet.ServletContextInitializer;
import org.springframework.core.Ordered;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Registers one {@link RateLimitFilter} per {@code sluice.filters.<name>}, initialised from the
 * properties exactly as from {@code web.xml}: the filter's parameters are its init-params, and the
 * application's {@code sluice.<parameter>} properties are set as the context-params
 * {@code sluice.<parameter>}, every filter's defaults. Each filter is initialised here, so that a bad
 * property stops start-up with the property's name and value, and mapped (async-supported, for
 * {@code REQUEST} dispatches) after the filters registered before this initializer, Spring
 * Security's among them. The application's policy registry is put in the {@code ServletContext}
 * first, so that every {@link RateLimitFilter} lists its policies in it.
 */
final class FilterRegistrations implements ServletContextInitializer, Ordered, StoreCircuits {

    private final SluiceSettings settings;
    private final Supplier<Object> meterRegistry;
    private final int order;
    private final ApplicationPolicies policies;
    private final Resolvers resolvers;
    /** Paths every filter mapped to {@code /*} leaves alone: the Actuator's. */
    private final List<String> managementPaths;
    /** The filters started, each with the store it decides on; written at start-up only. */
    private volatile List<Circuit> circuits = List.of();

    /**
     * One limiter's circuit breaker on a store, as health checks see it, and whether the limiter
     * answers 503 when the store fails ({@code failure-mode=closed}) or lets requests through.
     */
    record Circuit(String store, String owner, BooleanSupplier open, boolean failsClosed) {
    }

    /** Looks up the application's resolver beans by name; throws naming the bean when there is none. */
    interface Resolvers {
        KeyResolver keyResolver(String beanName);

        LimitResolver limitResolver(String beanName);
    }

    /**
     * @param meterRegistry the application's {@code MeterRegistry}, or {@code null} when there is none
     * @param order         this initializer's order: the filters are mapped after those of lower orders
     * @param policies      the application's policy registry
     * @param resolvers     the application's {@code KeyResolver} and {@code LimitResolver} beans
     * @param managementPaths the patterns of the Actuator's paths, left alone by filters mapped to {@code /*}
     */
    FilterRegistrations(SluiceSettings settings, Supplier<Object> meterRegistry, int order,
                        ApplicationPolicies policies, Resolvers resolvers, List<String> managementPaths) {
        this.settings = settings;
        this.meterRegistry = meterRegistry;
        this.order = order;
        this.policies = policies;
        this.resolvers = resolvers;
        this.managementPaths = List.copyOf(managementPaths);
    }

    @Override
    public int getOrder() {
        return order;
    }

    @Override
    public void onStartup(ServletContext context) throws ServletException {
        // Before any filter starts (the container starts those it was given after its initializers):
        // the filters of web.xml or of the application's beans list their policies here too.
        if (context.getAttribute(PolicyRegistry.ATTRIBUTE) == null) {
            context.setAttribute(PolicyRegistry.ATTRIBUTE, policies);
        }
        if (settings.filters().isEmpty()) {
            return;
        }
        for (Map.Entry<String, String> e : settings.application().entrySet()) {
            context.setInitParameter(SluiceSettings.PREFIX + e.getKey(), e.getValue());
        }
        Object registry = meterRegistry.get();
        if (registry != null && context.getAttribute(RateLimitFilter.METER_REGISTRY) == null) {
            context.setAttribute(RateLimitFilter.METER_REGISTRY, registry);
        }
        List<RateLimitFilter> started = new ArrayList<>();
        try {
            for (SluiceSettings.FilterSettings f : settings.filters()) {
                List<String> patterns = f.urlPatterns().isEmpty() ? List.of("/*") : f.urlPatterns();
                FilterExtras extras = FilterExtras.of(settings, f, resolvers, managementPaths);
                RateLimitFilter filter = new RateLimitFilter();
                filter = extras.keyResolver() == null ? filter : filter.withKeyResolver(extras.keyResolver());
                filter = extras.limitResolver() == null ? filter : filter.withLimitResolver(extras.limitResolver());
                try {
                    filter.init(new PropertyConfig(f, context));
                } catch (ServletException e) {
                    throw settings.failure(described(e.getMessage(), f), f, e);
                }
                started.add(filter);
                circuits = concat(circuits, new Circuit(settings.store(f), "filter '" + f.name() + "'",
                        filter::storeCircuitOpen, settings.failsClosed(f)));
                FilterRegistration.Dynamic registration = context.addFilter(f.name(),
                        new Initialised(filter, extras));
                if (registration == null) {
                    throw new IllegalStateException("Sluice filter '" + f.name() + "' (properties 'sluice.filters."
                            + f.name() + ".*'): the application already has a filter of that name");
                }
                registration.setAsyncSupported(true);
                registration.addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), true,
                        patterns.toArray(String[]::new));
            }
        } catch (RuntimeException e) {
            // Start-up fails: release the stores of the filters that started.
            started.forEach(RateLimitFilter::destroy);
            throw e;
        }
    }

    /** The filters' circuits on their stores. */
    @Override
    public List<Circuit> circuits() {
        return circuits;
    }

    private static List<Circuit> concat(List<Circuit> list, Circuit more) {
        List<Circuit> all = new ArrayList<>(list);
        all.add(more);
        return List.copyOf(all);
    }

    /**
     * The filter's message, {@code filter 'api': init-param 'limit' must ...}, in the words of the
     * properties: {@code Sluice filter 'api': property 'sluice.filters.api.limit' must ...}, or
     * {@code property 'sluice.limit'} when the value was the application's default.
     */
    static String described(String message, SluiceSettings.FilterSettings f) {
        String where = "filter '" + f.name() + "': ";
        String rest = message.startsWith(where) ? message.substring(where.length()) : message;
        rest = rest.replaceFirst("^init-param '", "property '" + f.property(""))
                .replaceFirst("^context-param '", "property '");
        return "Sluice filter '" + f.name() + "': " + rest;
    }

    /** The filter's configuration: its properties as init-params, in the application's servlet context. */
    private record PropertyConfig(SluiceSettings.FilterSettings settings,
            ServletContext context) implements FilterConfig {
        @Override
        public String getFilterName() {
            return settings.name();
        }

        @Override
        public ServletContext getServletContext() {
            return context;
        }

        @Override
        public String getInitParameter(String name) {
            return settings.parameters().get(name);
        }

        @Override
        public Enumeration<String> getInitParameterNames() {
            return Collections.enumeration(settings.parameters().keySet());
        }
    }

    /**
     * The filter as the container sees it: already initialised from the properties, so the
     * container's {@code init} does nothing; its {@code destroy} at shutdown releases the store.
     * Requests to excluded paths, and those its {@code skip-expression} is true for, pass by it
     * untouched.
     */
    private record Initialised(RateLimitFilter filter, FilterExtras extras) implements Filter {
        @Override
        public void init(FilterConfig config) {
            // Initialised by FilterRegistrations, from the properties.
        }

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            if (request instanceof HttpServletRequest http && extras.inspects()
                    && extras.skips(new ServletRequestView(http), path(http))) {
                chain.doFilter(request, response);
                return;
            }
            filter.doFilter(request, response, chain);
        }

        @Override
        public void destroy() {
            filter.destroy();
        }

        /** The request's path inside the application, as the container decoded and normalised it. */
        private static String path(HttpServletRequest request) {
            String servletPath = request.getServletPath();
            String pathInfo = request.getPathInfo();
            String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
            return path.isEmpty() ? "/" : path;
        }
    }
}
