package dev.sluice.spring.boot;

import dev.sluice.web.internal.Parameter;
import dev.sluice.web.internal.WebSettings;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The application's {@code sluice.*} settings as every Spring adapter of Sluice reads them: the
 * {@link SluiceProperties} Spring Boot bound, flattened to the vocabulary's parameters by name
 * ({@code sluice.<parameter>}, every filter's defaults, as {@code web.xml} context-params are; and
 * one {@link FilterSettings} per {@code sluice.filters.<name>}), after a check that every
 * {@code sluice.*} name the environment holds is one of them. Values are parsed by the adapters'
 * own parsers, not here; messages about them are turned into the properties' words by
 * {@link #failure}.
 *
 * <p>Spring's binding alone would ignore a misspelt name; the check stops start-up instead, naming
 * it and the nearest real name, in whichever form it was written: {@code sluice.filter.api.limit}
 * (singular), {@code sluice.filters.api.limt}, or the environment variable {@code SLUICE_FAILURE_MODE},
 * which Spring reads as {@code sluice.failure.mode} (the variable of {@code sluice.failure-mode} is
 * {@code SLUICE_FAILUREMODE}).
 */
final class SluiceSettings {

    static final String PREFIX = "sluice.";
    static final String FILTERS = "filters";
    static final String URL_PATTERNS = "url-patterns";
    static final String EXCLUDE = "exclude";
    static final String KEY_RESOLVER = "key-resolver";
    static final String LIMIT_RESOLVER = "limit-resolver";
    static final String KEY_EXPRESSION = "key-expression";
    static final String SKIP_EXPRESSION = "skip-expression";
    static final String HEALTH_DOWN = "health.down-when-failing-open";
    static final String METER_TAGS = "meter-tags";
    /** The tags Sluice's meters carry themselves: a tag of the same name would replace Sluice's. */
    static final List<String> OWN_TAGS = List.of("policy", "outcome", "error.type");

    private static final ConfigurationPropertyName SLUICE = ConfigurationPropertyName.of("sluice");
    /** What a filter takes besides the vocabulary's parameters. */
    private static final List<String> FILTER_EXTRAS = List.of(URL_PATTERNS, EXCLUDE, KEY_RESOLVER, LIMIT_RESOLVER,
            KEY_EXPRESSION, SKIP_EXPRESSION);
    private static final Pattern PROPERTY = Pattern.compile("^property '([^']+)'");

    /**
     * One filter of {@code sluice.filters}: its parameters (raw), URL patterns, exclusions, resolvers
     * and SpEL expressions ({@code null}: none).
     */
    record FilterSettings(String name, Map<String, String> parameters, List<String> urlPatterns,
                          List<String> exclude, String keyResolver, String limitResolver, String keyExpression,
                          String skipExpression) {
        FilterSettings {
            parameters = Map.copyOf(parameters);
            urlPatterns = List.copyOf(urlPatterns);
            exclude = List.copyOf(exclude);
        }

        /** The property a parameter of this filter is given by: {@code sluice.filters.api.limit}. */
        String property(String parameter) {
            return PREFIX + FILTERS + "." + name + "." + parameter;
        }
    }

    private final Map<String, String> application;
    private final List<FilterSettings> filters;
    private final String keyResolver;
    private final String limitResolver;
    private final boolean downWhenFailingOpen;
    private final Map<String, Map<String, String>> meterTags;

    private SluiceSettings(Map<String, String> application, List<FilterSettings> filters, String keyResolver,
                           String limitResolver, boolean downWhenFailingOpen,
                           Map<String, Map<String, String>> meterTags) {
        this.application = Map.copyOf(application);
        this.filters = List.copyOf(filters);
        this.keyResolver = keyResolver;
        this.limitResolver = limitResolver;
        this.downWhenFailingOpen = downWhenFailingOpen;
        this.meterTags = meterTags;
    }

    /**
     * The settings of {@code properties}, bound from {@code environment}, once every {@code sluice.*}
     * name in it is checked.
     *
     * @throws SluiceConfigurationException naming a {@code sluice.*} property that is no Sluice setting
     */
    static SluiceSettings of(SluiceProperties properties, Environment environment) {
        requireKnownNames(environment);
        List<FilterSettings> filters = new ArrayList<>();
        properties.getFilters().forEach((name, f) -> filters.add(new FilterSettings(name, f.parameters(),
                trimmed(f.getUrlPatterns()), trimmed(f.getExclude()), blankToNull(f.getKeyResolver()),
                blankToNull(f.getLimitResolver()), blankToNull(f.getKeyExpression()),
                blankToNull(f.getSkipExpression()))));
        return new SluiceSettings(properties.parameters(), filters, blankToNull(properties.getKeyResolver()),
                blankToNull(properties.getLimitResolver()), properties.getHealth().isDownWhenFailingOpen(),
                meterTags(properties.getMeterTags(), environment));
    }

    /**
     * The tags of each policy's meters, checked: a tag needs a name and a value, and none may be one
     * of Sluice's own tags ({@link #OWN_TAGS}), whose meters it would merge or mislabel.
     *
     * @throws SluiceConfigurationException naming the property and its value
     */
    private static Map<String, Map<String, String>> meterTags(Map<String, Map<String, String>> given,
                                                              Environment environment) {
        Map<String, Map<String, String>> checked = new LinkedHashMap<>();
        given.forEach((policy, tags) -> {
            String policyProperty = PREFIX + METER_TAGS + "." + policy;
            if (policy.isBlank() || policy.contains("+")) {
                throw meterTagFailure(policyProperty + ".*", null, environment, "property '" + policyProperty
                        + ".*' must name one policy (not blank, no '+': policies decided together get the tags "
                        + "of each), got '" + policy + "'", "Name the policy the tags are for.");
            }
            Map<String, String> policyTags = new LinkedHashMap<>();
            (tags == null ? Map.<String, String>of() : tags).forEach((tag, value) -> {
                String property = policyProperty + "." + tag;
                String shown = value;
                if (tag.isBlank()) {
                    throw meterTagFailure(property, shown, environment, "property '" + property
                            + "' must name a tag: its name is blank", "Give the tag a name: " + policyProperty
                            + ".<tag>=<value>.");
                }
                if (OWN_TAGS.stream().anyMatch(own -> own.equalsIgnoreCase(tag.trim()))) {
                    throw meterTagFailure(property, shown, environment, "property '" + property + "' names "
                            + "the tag '" + tag.trim() + "', which Sluice's meters carry themselves ("
                            + String.join(", ", OWN_TAGS) + "), got '" + shown + "'",
                            "Rename the tag: '" + tag.trim() + "' would replace Sluice's own.");
                }
                if (value == null || value.isBlank()) {
                    throw meterTagFailure(property, shown, environment, "property '" + property
                            + "' must give the tag a value, got '" + (value == null ? "" : value) + "'",
                            "Give '" + property + "' a value, or remove it.");
                }
                policyTags.put(tag.trim(), value.trim());
            });
            checked.put(policy, Map.copyOf(policyTags));
        });
        return Collections.unmodifiableMap(checked);
    }

    private static SluiceConfigurationException meterTagFailure(String property, String value,
                                                                Environment environment, String message,
                                                                String action) {
        return new SluiceConfigurationException(message, property, value, origin(property, environment), action,
                null);
    }

    /** Where {@code property} was set (a file and line, an environment variable); {@code null} when unknown. */
    private static String origin(String property, Environment environment) {
        if (!ConfigurationPropertyName.isValid(property)) {
            return null;
        }
        ConfigurationPropertyName name = ConfigurationPropertyName.of(property);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty set = source.getConfigurationProperty(name);
            if (set != null && set.getOrigin() != null) {
                return set.getOrigin().toString();
            }
        }
        return null;
    }

    /**
     * The settings bound from {@code environment} alone, as {@link #of(SluiceProperties, Environment)}:
     * for what registers beans before any bean, {@link SluiceProperties} included, exists.
     *
     * @throws SluiceConfigurationException naming a {@code sluice.*} property that is no Sluice setting
     */
    static SluiceSettings read(Environment environment) {
        return of(Binder.get(environment).bindOrCreate("sluice", SluiceProperties.class), environment);
    }

    /** Settings given directly, for tests. */
    static SluiceSettings of(Map<String, String> application, List<FilterSettings> filters) {
        return new SluiceSettings(application, filters, null, null, false, Map.of());
    }

    private static List<String> trimmed(List<String> values) {
        return values == null ? List.of() : values.stream().map(String::trim).filter(v -> !v.isEmpty()).toList();
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    /**
     * Checks every {@code sluice.*} name of every property source of {@code environment}.
     *
     * @throws SluiceConfigurationException naming the first that is no Sluice setting
     */
    static void requireKnownNames(Environment environment) {
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            List<ConfigurationPropertyName> unknown;
            try (Stream<ConfigurationPropertyName> names = iterable.stream()) {
                unknown = names.filter(SLUICE::isAncestorOf)
                        .filter(n -> !known(n)).limit(1).toList();
            }
            if (!unknown.isEmpty()) {
                throw unknown(unknown.get(0), source.getConfigurationProperty(unknown.get(0)));
            }
        }
    }

    /** Whether {@code name} is a Sluice setting, in any of the forms relaxed binding accepts. */
    private static boolean known(ConfigurationPropertyName name) {
        int n = name.getNumberOfElements();
        String first = uniform(name, 1);
        if (n == 2) {
            return !first.equals(uniform(Parameter.POLICY.configName())) && applicationNames().contains(first);
        }
        if (first.equals(FILTERS) && n >= 4) {
            String parameter = uniform(name, 3);
            if (n == 4) {
                return filterNames().contains(parameter);
            }
            // A list's element: sluice.filters.api.url-patterns[0].
            return n == 5 && name.isLastElementIndexed()
                    && (parameter.equals(uniform(URL_PATTERNS)) || parameter.equals(uniform(EXCLUDE)));
        }
        if (first.equals(uniform(METER_TAGS))) {
            // sluice.meter-tags.<policy>.<tag>; a tag's name may have dots of its own (http.route)
            return n >= 4;
        }
        return n == 3 && name.equals(ConfigurationPropertyName.of(PREFIX + HEALTH_DOWN));
    }

    private static Set<String> applicationNames() {
        Set<String> names = new LinkedHashSet<>();
        for (Parameter p : Parameter.values()) {
            names.add(uniform(p.configName()));
        }
        names.add(uniform(KEY_RESOLVER));
        names.add(uniform(LIMIT_RESOLVER));
        return names;
    }

    private static Set<String> filterNames() {
        Set<String> names = applicationNames();
        FILTER_EXTRAS.forEach(e -> names.add(uniform(e)));
        return names;
    }

    /** An element as relaxed binding compares it: lower case, no dashes. */
    private static String uniform(ConfigurationPropertyName name, int element) {
        return name.getElement(element, ConfigurationPropertyName.Form.UNIFORM);
    }

    private static String uniform(String element) {
        return element.replace("-", "").toLowerCase(Locale.ROOT);
    }

    /** The failure for an unknown name: the name as written, its value and origin, and the nearest real name. */
    private static SluiceConfigurationException unknown(ConfigurationPropertyName name, ConfigurationProperty set) {
        String value = set == null || set.getValue() == null ? null : WebSettings.shown(String.valueOf(set.getValue()));
        String origin = set == null || set.getOrigin() == null ? null : set.getOrigin().toString();
        List<String> known = knownProperties(name);
        String nearest = nearest(name, known);
        String message;
        if (name.getNumberOfElements() == 2 && uniform(name, 1).equals(uniform(Parameter.POLICY.configName()))) {
            message = "property '" + name + "' cannot be every filter's default: a policy names its own budget, "
                    + "so each filter has its own (default: the filter name), got '" + value + "'";
            return new SluiceConfigurationException(message, name.toString(), value, origin,
                    "Set 'sluice.filters.<name>.policy' on the filter it names, or remove 'sluice.policy'.", null);
        }
        message = "property '" + name + "' is not a Sluice parameter; known: " + String.join(", ", known)
                + (value == null ? "" : "; got '" + value + "'")
                + (nearest == null ? "" : "; did you mean '" + nearest + "'?");
        String action = nearest == null
                ? "Remove '" + name + "', or rename it to one of: " + String.join(", ", known) + "."
                : "Rename '" + name + "' to '" + nearest + "' (as an environment variable: "
                + environmentVariable(nearest) + ").";
        return new SluiceConfigurationException(message, name.toString(), value, origin, action, null);
    }

    /** The names a property shaped like {@code name} could have meant, in their canonical form. */
    private static List<String> knownProperties(ConfigurationPropertyName name) {
        List<String> known = new ArrayList<>();
        boolean filter = name.getNumberOfElements() >= 3 && distance(uniform(name, 1), FILTERS) <= 2;
        if (filter) {
            String prefix = PREFIX + FILTERS + "." + name.getElement(2, ConfigurationPropertyName.Form.ORIGINAL) + ".";
            Stream.concat(Stream.of(Parameter.values()).map(Parameter::configName), FILTER_EXTRAS.stream())
                    .sorted().forEach(p -> known.add(prefix + p));
        } else {
            Stream.concat(Stream.of(Parameter.values()).filter(p -> p != Parameter.POLICY).map(Parameter::configName),
                    Stream.of(KEY_RESOLVER, LIMIT_RESOLVER, HEALTH_DOWN, FILTERS + ".<name>.*",
                            METER_TAGS + ".<policy>.<tag>")).sorted()
                    .forEach(p -> known.add(PREFIX + p));
        }
        return known;
    }

    /** The known property nearest to {@code name}, when one is near: a dash, dot or a couple of letters apart. */
    private static String nearest(ConfigurationPropertyName name, List<String> known) {
        String written = name.toString().toLowerCase(Locale.ROOT).replace("-", "");
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : known) {
            if (candidate.contains("<")) {
                continue;
            }
            String c = candidate.toLowerCase(Locale.ROOT).replace("-", "");
            // Dots count little: SLUICE_FAILURE_MODE reads as sluice.failure.mode.
            int d = c.replace(".", "").equals(written.replace(".", "")) ? 0 : distance(c, written);
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return bestDistance <= 2 ? best : null;
    }

    /** The environment variable Spring Boot binds to {@code property}: {@code SLUICE_FAILUREMODE}. */
    static String environmentVariable(String property) {
        return property.replace("-", "").replace('.', '_').toUpperCase(Locale.ROOT);
    }

    /** Levenshtein distance, for names of a few dozen characters. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /** The application's {@code sluice.<parameter>} values, by parameter name; the defaults of every filter. */
    Map<String, String> application() {
        return application;
    }

    /** The raw application value of a parameter, {@code null} if absent. */
    Function<String, String> applicationLookup() {
        return application::get;
    }

    /** The {@code store} of a filter (its own, else the application's), or of the application for {@code null}. */
    String store(FilterSettings filter) {
        return value(filter, Parameter.STORE, WebSettings.DEFAULTS.store());
    }

    /** Whether a filter's route (the application's for {@code null}) answers 503 when its store fails. */
    boolean failsClosed(FilterSettings filter) {
        return value(filter, Parameter.FAILURE_MODE, "open").equalsIgnoreCase("closed");
    }

    private String value(FilterSettings filter, Parameter parameter, String fallback) {
        String value = filter == null ? null : filter.parameters().get(parameter.configName());
        value = value == null || value.isBlank() ? application.get(parameter.configName()) : value;
        return value == null || value.isBlank() ? fallback : value.trim();
    }

    /** Every {@code store} the application's filters and annotated handlers use. */
    Set<String> stores() {
        Set<String> stores = new LinkedHashSet<>();
        stores.add(store(null));
        filters.forEach(f -> stores.add(store(f)));
        return stores;
    }

    /** The filters of {@code sluice.filters}, by name. */
    List<FilterSettings> filters() {
        return filters;
    }

    /** The {@code KeyResolver} bean a filter names (its own, else the application's); {@code null}: none. */
    String keyResolver(FilterSettings filter) {
        return filter != null && filter.keyResolver() != null ? filter.keyResolver() : keyResolver;
    }

    /** The {@code LimitResolver} bean a filter names (its own, else the application's); {@code null}: none. */
    String limitResolver(FilterSettings filter) {
        return filter != null && filter.limitResolver() != null ? filter.limitResolver() : limitResolver;
    }

    /** The property naming a filter's resolver ({@code key-resolver}, {@code limit-resolver}), as it was given. */
    String resolverProperty(FilterSettings filter, String which) {
        boolean own = filter != null && (which.equals(KEY_RESOLVER) ? filter.keyResolver() : filter.limitResolver())
                != null;
        return own ? filter.property(which) : PREFIX + which;
    }

    /** The tags of each policy's meters, by policy name then tag name; checked, unmodifiable. */
    Map<String, Map<String, String>> meterTags() {
        return meterTags;
    }

    /** Whether a store outage behind fail-open routes makes the health contributor DOWN. */
    boolean downWhenFailingOpen() {
        return downWhenFailingOpen;
    }

    /**
     * A parser's message, {@code 'limit' must look like ...}, with the property it came from in front:
     * {@code property 'sluice.filters.api.limit' must ...} or {@code property 'sluice.limit' must ...}
     * for an application default; {@code filter} is {@code null} for the application's own settings.
     */
    String describe(String message, FilterSettings filter) {
        int end = message.startsWith("'") ? message.indexOf('\'', 1) : -1;
        if (end < 0) {
            return message;
        }
        String parameter = message.substring(1, end);
        String property = filter != null && filter.parameters().containsKey(parameter) ? filter.property(parameter)
                : PREFIX + parameter;
        return "property '" + property + "'" + message.substring(end + 1);
    }

    /**
     * The start-up failure for a message that names a property ({@code [Sluice filter 'api': ]property
     * 'sluice.filters.api.limit' must ...}), with that property's value for the failure report.
     */
    SluiceConfigurationException failure(String message, FilterSettings filter, Throwable cause) {
        String rest = message.startsWith("Sluice filter '") ? message.substring(message.indexOf("': ") + 3) : message;
        Matcher m = PROPERTY.matcher(rest);
        String property = m.find() ? m.group(1) : null;
        String value = null;
        if (property != null) {
            String parameter = property.substring(property.lastIndexOf('.') + 1);
            boolean own = property.startsWith(PREFIX + FILTERS + ".") && filter != null;
            value = own && parameter.equals(EXCLUDE) ? String.join(",", filter.exclude())
                    : own ? filter.parameters().get(parameter) : application.get(parameter);
            value = value == null ? null : Parameter.STORE.configName().equals(parameter)
                    ? WebSettings.shown(value) : value;
        }
        String action = property == null ? "Fix the Sluice setting the message names."
                : "Give '" + property + "' a value the message above accepts (docs/configuration.md lists them).";
        return new SluiceConfigurationException(message, property == null ? "sluice.*" : property, value, null,
                action, cause);
    }
}
