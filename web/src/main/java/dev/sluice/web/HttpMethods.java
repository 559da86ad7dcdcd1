package dev.sluice.web;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The {@code methods} parameter: the HTTP methods a route limits, such as {@code POST,PUT}; the
 * others pass untouched (not counted, no rate-limit headers). Empty: every method.
 */
final class HttpMethods {

    /** The methods of RFC 9110 and PATCH (RFC 5789), which {@code methods} may name. */
    private static final List<String> KNOWN = List.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS",
            "TRACE", "PATCH");

    private HttpMethods() {
    }

    /**
     * Parses comma-separated method names, in any case; blank: every method (empty set).
     *
     * @throws IllegalArgumentException naming {@code 'methods'} and the value
     */
    static Set<String> parse(String value) {
        Set<String> methods = new LinkedHashSet<>();
        if (value == null || value.isBlank()) {
            return Set.of();
        }
        for (String item : value.split(",", -1)) {
            String method = item.trim().toUpperCase(Locale.ROOT);
            if (!KNOWN.contains(method)) {
                throw new IllegalArgumentException("'methods' must be a comma-separated list of " + String.join(", ", KNOWN)
                        + ", got '" + value + "'");
            }
            methods.add(method);
        }
        return Set.copyOf(methods);
    }

    /**
     * Whether a route limiting {@code methods} (empty: all) limits a request of {@code method}; a
     * request whose method is unknown ({@code null}) is limited.
     */
    static boolean limits(Set<String> methods, String method) {
        return methods.isEmpty() || method == null || methods.contains(method);
    }
}
