package dev.sluice.servlet;

import dev.sluice.web.internal.Parameter;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;

import java.util.Collections;
import java.util.function.Function;

/**
 * The raw parameters of one filter: its init-param, or else the application's context-param
 * {@code sluice.<parameter>}, the default of every filter. Checks at start-up that every
 * {@code sluice.*} context-param is a parameter, and names where a bad value came from.
 */
final class FilterParameters implements Function<String, String> {

    /** The prefix of the context-params that are every filter's defaults. */
    static final String PREFIX = "sluice.";

    private final FilterConfig config;
    private final ServletContext context;

    /**
     * The parameters of {@code config}.
     *
     * @throws IllegalArgumentException naming a {@code sluice.*} context-param that is no parameter,
     *                                  or {@code sluice.policy}, which cannot be shared
     */
    FilterParameters(FilterConfig config) {
        this.config = config;
        this.context = config.getServletContext();
        if (context == null) {
            return;
        }
        for (String name : Collections.list(context.getInitParameterNames())) {
            if (!name.startsWith(PREFIX)) {
                continue;
            }
            String parameter = name.substring(PREFIX.length());
            try {
                Parameter.named(parameter);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("context-param '" + name + "' is not a Sluice parameter; known: "
                        + e.getMessage().substring(e.getMessage().indexOf("known: ") + 7)
                        .replaceAll("(^|, )", "$1" + PREFIX),
                        e);
            }
            if (parameter.equals(Parameter.POLICY.configName())) {
                throw new IllegalArgumentException("context-param '" + name + "' cannot be every filter's default: a "
                        + "policy names its own budget, so each filter has its own (default: the filter name), got '"
                        + context.getInitParameter(name) + "'");
            }
        }
    }

    @Override
    public String apply(String name) {
        String value = config.getInitParameter(name);
        if (value == null && context != null) {
            value = context.getInitParameter(PREFIX + name);
        }
        return value;
    }

    /**
     * A parser's message, {@code 'limit' must look like ...}, with where the value came from in
     * front: {@code init-param 'limit' must ...} or {@code context-param 'sluice.limit' must ...}.
     */
    String describe(IllegalArgumentException e) {
        String message = e.getMessage();
        int end = message.startsWith("'") ? message.indexOf('\'', 1) : -1;
        if (end > 0) {
            String name = message.substring(1, end);
            if (config.getInitParameter(name) == null && context != null
                    && context.getInitParameter(PREFIX + name) != null) {
                return "context-param '" + PREFIX + name + "'" + message.substring(end + 1);
            }
        }
        return "init-param " + message;
    }
}
