package dev.sluice.spring.boot;

import dev.sluice.web.KeyResolver;
import dev.sluice.web.LimitResolver;
import dev.sluice.web.RequestView;

import java.util.List;

/**
 * What the starter adds to a filter of {@code sluice.filters.<name>} besides its parameters, the
 * same for a servlet filter and a WebFlux one: the paths it leaves alone ({@code exclude}, and the
 * Actuator's when it is mapped to {@code /*}), its {@code skip-expression}, and the caller and
 * limits its {@code key-expression} or resolver beans give. Read at start-up; a bad value stops it,
 * naming the property and the value.
 *
 * @param exclude       the paths left alone
 * @param skip          the {@code skip-expression}, {@code null}: none
 * @param pathForKey    whether the {@code key-expression} reads the path, kept in a request attribute
 * @param keyResolver   the caller's resolver, {@code null}: the {@code key} sources
 * @param limitResolver the limits' resolver, {@code null}: the filter's own limits
 */
record FilterExtras(PathPatterns exclude, RequestExpression skip, boolean pathForKey, KeyResolver keyResolver,
                    LimitResolver limitResolver) {

    /**
     * The extras of {@code f}.
     *
     * @param resolvers       the application's resolver beans
     * @param managementPaths the Actuator's paths, left alone by a filter mapped to {@code /*}
     * @throws SluiceConfigurationException naming the property and the value of a bad one
     */
    static FilterExtras of(SluiceSettings settings, SluiceSettings.FilterSettings f,
                           FilterRegistrations.Resolvers resolvers, List<String> managementPaths) {
        List<String> patterns = f.urlPatterns().isEmpty() ? List.of("/*") : f.urlPatterns();
        PathPatterns exclude;
        try {
            exclude = new PathPatterns(f.exclude());
        } catch (IllegalArgumentException e) {
            throw settings.failure("Sluice filter '" + f.name() + "': property '" + f.property(SluiceSettings.EXCLUDE)
                    + "'" + e.getMessage().substring("'exclude'".length()), f, e);
        }
        // Mapped to everything, a filter would limit the health checks of the platform running the
        // application; a filter mapped to the Actuator's paths on purpose limits them.
        exclude = patterns.contains("/*") ? exclude.and(managementPaths) : exclude;
        RequestExpression skip = f.skipExpression() == null ? null
                : RequestExpression.parse(f, SluiceSettings.SKIP_EXPRESSION, f.skipExpression());
        KeyResolver key = null;
        String keyBean = settings.keyResolver(f);
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
            key = RequestExpression.parse(f, SluiceSettings.KEY_EXPRESSION, f.keyExpression()).keyResolver();
            keyBean = null;
        }
        try {
            key = keyBean == null ? key : resolvers.keyResolver(keyBean);
        } catch (RuntimeException e) {
            throw resolverFailure(settings, f, SluiceSettings.KEY_RESOLVER, keyBean, e);
        }
        String limitsBean = settings.limitResolver(f);
        LimitResolver limits;
        try {
            limits = limitsBean == null ? null : resolvers.limitResolver(limitsBean);
        } catch (RuntimeException e) {
            throw resolverFailure(settings, f, SluiceSettings.LIMIT_RESOLVER, limitsBean, e);
        }
        return new FilterExtras(exclude, skip, f.keyExpression() != null, key, limits);
    }

    private static SluiceConfigurationException resolverFailure(SluiceSettings settings,
                                                                SluiceSettings.FilterSettings f, String which,
                                                                String bean, RuntimeException e) {
        String property = settings.resolverProperty(f, which);
        return new SluiceConfigurationException("Sluice filter '" + f.name() + "': property '" + property
                + "' names no bean of its type: " + e.getMessage() + ", got '" + bean + "'", property, bean, null,
                "Name a " + (which.equals(SluiceSettings.KEY_RESOLVER) ? "KeyResolver" : "LimitResolver")
                        + " bean of the application in '" + property + "', or remove it.", e);
    }

    /** Whether the filter looks at requests beyond its own parameters: it may skip one, or needs its path. */
    boolean inspects() {
        return !exclude.isEmpty() || skip != null || pathForKey;
    }

    /**
     * Whether the request of {@code path} (inside the application) is left alone; if not, and the
     * key expression reads the path, the path is put in the request's attributes for it.
     */
    boolean skips(RequestView view, String path) {
        if (exclude.matches(path) || skip != null && skip.skips(view, path)) {
            return true;
        }
        if (pathForKey) {
            view.setAttribute(RequestExpression.PATH, path);
        }
        return false;
    }
}
