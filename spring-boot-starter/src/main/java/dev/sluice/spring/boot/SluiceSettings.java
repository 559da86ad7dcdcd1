package dev.sluice.spring.boot;

import dev.sluice.web.internal.Parameter;
import dev.sluice.web.internal.WebSettings;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The {@code sluice.*} properties of a Spring application, as plain text: {@code sluice.<parameter>},
 * the application's defaults (what {@code web.xml} context-params are to the servlet filter), and
 * {@code sluice.filters.<name>.<parameter>} plus {@code url-patterns}, one filter each. The values are
 * parsed by the servlet filter's own parsers, not here; this class only checks that every name is a
 * Sluice parameter, so that a typo such as {@code sluice.filters.api.limt} or {@code sluice.stor}
 * stops start-up. Names deeper than {@code sluice.<name>} outside {@code sluice.filters} are left
 * to whoever uses them.
 */
final class SluiceSettings {

    static final String PREFIX = "sluice.";
    static final String FILTERS = "filters";
    static final String URL_PATTERNS = "url-patterns";

    private static final ConfigurationPropertyName SLUICE = ConfigurationPropertyName.of("sluice");

    /** One filter of {@code sluice.filters}: its parameters (raw) and the URL patterns it is mapped to. */
    record FilterSettings(String name, Map<String, String> parameters, List<String> urlPatterns) {
        FilterSettings {
            parameters = Map.copyOf(parameters);
            urlPatterns = List.copyOf(urlPatterns);
        }

        /** The property a parameter of this filter is given by: {@code sluice.filters.api.limit}. */
        String property(String parameter) {
            return PREFIX + FILTERS + "." + name + "." + parameter;
        }
    }

    private final Map<String, String> application;
    private final List<FilterSettings> filters;

    SluiceSettings(Map<String, String> application, List<FilterSettings> filters) {
        this.application = Map.copyOf(application);
        this.filters = List.copyOf(filters);
    }

    /**
     * The settings of {@code environment}.
     *
     * @throws IllegalArgumentException naming a {@code sluice.*} property that is no Sluice parameter
     */
    static SluiceSettings read(Environment environment) {
        Binder binder = Binder.get(environment);
        Set<String> applicationNames = new LinkedHashSet<>();
        Map<String, Set<String>> filterNames = new LinkedHashMap<>(); // in the order written
        for (ConfigurationPropertyName name : names(environment)) {
            String first = name.getElement(1, ConfigurationPropertyName.Form.DASHED);
            if (first.equals(FILTERS)) {
                if (name.getNumberOfElements() < 4) {
                    throw new IllegalArgumentException("property '" + name + "' is not a Sluice filter parameter: "
                            + "use 'sluice.filters.<name>.<parameter>'");
                }
                String filter = name.getElement(2, ConfigurationPropertyName.Form.DASHED);
                String parameter = name.getElement(3, ConfigurationPropertyName.Form.DASHED);
                if (!parameter.equals(URL_PATTERNS)) {
                    named(parameter, PREFIX + FILTERS + "." + filter + ".", URL_PATTERNS);
                }
                filterNames.computeIfAbsent(filter, f -> new LinkedHashSet<>()).add(parameter);
            } else if (name.getNumberOfElements() == 2) {
                // Only sluice.<name> can be a parameter (or its typo); deeper names, such as a build's
                // sluice.release-check.skip system property, belong to someone else.
                named(first, PREFIX, FILTERS + ".<name>.*");
                if (first.equals(Parameter.POLICY.configName())) {
                    throw new IllegalArgumentException("property 'sluice.policy' cannot be every filter's default: a "
                            + "policy names its own budget, so each filter has its own (default: the filter name), "
                            + "got '"
                            + binder.bind(PREFIX + first, String.class).orElse("") + "'");
                }
                applicationNames.add(first);
            }
        }
        Map<String, String> application = new LinkedHashMap<>();
        for (String parameter : applicationNames) {
            binder.bind(PREFIX + parameter, String.class).ifBound(value -> application.put(parameter, value));
        }
        List<FilterSettings> filters = filterNames.entrySet().stream().map(e -> {
            String prefix = PREFIX + FILTERS + "." + e.getKey() + ".";
            Map<String, String> parameters = new LinkedHashMap<>();
            List<String> patterns = List.of();
            for (String parameter : e.getValue()) {
                if (parameter.equals(URL_PATTERNS)) {
                    patterns = binder.bind(prefix + parameter, Bindable.listOf(String.class)).orElse(List.of())
                            .stream().map(String::trim).filter(p -> !p.isEmpty()).toList();
                } else {
                    binder.bind(prefix + parameter, String.class).ifBound(value -> parameters.put(parameter, value));
                }
            }
            return new FilterSettings(e.getKey(), parameters, patterns);
        }).toList();
        return new SluiceSettings(application, filters);
    }

    /** Every property name under {@code sluice}, from every property source of the environment. */
    private static Set<ConfigurationPropertyName> names(Environment environment) {
        Set<ConfigurationPropertyName> names = new LinkedHashSet<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (source instanceof IterableConfigurationPropertySource iterable) {
                try (Stream<ConfigurationPropertyName> stream = iterable.stream()) {
                    stream.filter(n -> SLUICE.isAncestorOf(n)).forEach(names::add);
                }
            }
        }
        return names;
    }

    /** Checks that {@code parameter} is a Sluice parameter; the message names the property and the known ones. */
    private static void named(String parameter, String prefix, String... more) {
        try {
            Parameter.named(parameter);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("property '" + prefix + parameter
                    + "' is not a Sluice parameter; known: "
                    + String.join(", ", Stream.concat(Arrays.stream(Parameter.values()).map(Parameter::configName),
                    Arrays.stream(more)).sorted().map(p -> prefix + p).toList()), e);
        }
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
        String store = filter == null ? null : filter.parameters().get(Parameter.STORE.configName());
        store = store == null || store.isBlank() ? application.get(Parameter.STORE.configName()) : store;
        return store == null || store.isBlank() ? WebSettings.DEFAULTS.store() : store.trim();
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
}
