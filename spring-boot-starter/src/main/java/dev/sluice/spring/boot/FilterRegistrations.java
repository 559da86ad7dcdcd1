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
                PathPatterns exclude = excluded(f, patterns);
                RequestExpression skip = f.skipExpression() == null ? null
                        : RequestExpression.parse(f, SluiceSettings.SKIP_EXPRESSION, f.skipExpression());
                RateLimitFilter filter = resolved(new RateLimitFilter(), f);
                try {
                    filter.init(new PropertyConfig(f, context));
                } catch (ServletException e) {
                    throw settings.failure(described(e.getMessage(), f), f, e);
                }
                started.add(filter);
                circuits = concat(circuits, new Circuit(settings.store(f), "filter '" + f.name() + "'",
                        filter::storeCircuitOpen, settings.failsClosed(f)));
                FilterRegistration.Dynamic registration = context.addFilter(f.name(),
                        new Initialised(filter, exclude, skip, f.keyExpression() != null));
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

    /** The filter's exclusions: its {@code exclude}, and the Actuator's paths when it is mapped to {@code /*}. */
    private PathPatterns excluded(SluiceSettings.FilterSettings f, List<String> patterns) {
        PathPatterns exclude;
        try {
            exclude = new PathPatterns(f.exclude());
        } catch (IllegalArgumentException e) {
            throw settings.failure("Sluice filter '" + f.name() + "': property '" + f.property(SluiceSettings.EXCLUDE)
                    + "'" + e.getMessage().substring("'exclude'".length()), f, e);
        }
        // Mapped to everything, a filter would limit the health checks of the platform running the
        // application; a filter mapped to the Actuator's paths on purpose limits them.
        return patterns.contains("/*") ? exclude.and(managementPaths) : exclude;
    }

    /** The filter with its key expression or the resolver beans its properties name. */
    private RateLimitFilter resolved(RateLimitFilter filter, SluiceSettings.FilterSettings f) {
        String key = settings.keyResolver(f);
        String limits = settings.limitResolver(f);
        if (f.keyExpression() != null) {
            if (f.keyResolver() != null) {
                String property = f.property(SluiceSettings.KEY_EXPRESSION);
                throw new SluiceConfigurationException("Sluice filter '" + f.name() + "': property '" + property
                        + "' and property '" + f.property(SluiceSettings.KEY_RESOLVER) + "' both name the caller; "
                        + "give one, got '" + f.keyExpression() + "' and '" + f.keyResolver() + "'", property,
                        f.keyExpression(), null, "Remove '" + property + "' or '"
                        + f.property(SluiceSettings.KEY_RESOLVER) + "'.", null);
            }
            // The filter's own expression is nearer than the application's sluice.key-resolver.
            filter = filter.withKeyResolver(RequestExpression.parse(f, SluiceSettings.KEY_EXPRESSION,
                    f.keyExpression()).keyResolver());
            key = null;
        }
        try {
            filter = key == null ? filter : filter.withKeyResolver(resolvers.keyResolver(key));
        } catch (RuntimeException e) {
            throw resolverFailure(f, SluiceSettings.KEY_RESOLVER, key, e);
        }
        try {
            return limits == null ? filter : filter.withLimitResolver(resolvers.limitResolver(limits));
        } catch (RuntimeException e) {
            throw resolverFailure(f, SluiceSettings.LIMIT_RESOLVER, limits, e);
        }
    }

    private SluiceConfigurationException resolverFailure(SluiceSettings.FilterSettings f, String which,
                                                         String bean, RuntimeException e) {
        String property = settings.resolverProperty(f, which);
        return new SluiceConfigurationException("Sluice filter '" + f.name() + "': property '" + property
                + "' names no bean of its type: " + e.getMessage() + ", got '" + bean + "'", property, bean, null,
                "Name a " + (which.equals(SluiceSettings.KEY_RESOLVER) ? "KeyResolver" : "LimitResolver")
                        + " bean of the application in '" + property + "', or remove it.", e);
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
     * untouched; {@code pathForKey}: its {@code key-expression} reads the path from the request.
     */
    private record Initialised(RateLimitFilter filter, PathPatterns exclude, RequestExpression skip,
                               boolean pathForKey) implements Filter {
        @Override
        public void init(FilterConfig config) {
            // Initialised by FilterRegistrations, from the properties.
        }

        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            if (request instanceof HttpServletRequest http && (!exclude.isEmpty() || skip != null || pathForKey)) {
                String path = path(http);
                if (exclude.matches(path) || skip != null && skip.skips(new ServletRequestView(http), path)) {
                    chain.doFilter(request, response);
                    return;
                }
                if (pathForKey) {
                    http.setAttribute(RequestExpression.PATH, path);
                }
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
