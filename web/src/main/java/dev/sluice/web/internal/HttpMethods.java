package dev.sluice.web.internal;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The {@code methods} parameter: the HTTP methods a route limits, such as {@code POST,PUT}; the
 * others pass untouched (not counted, no rate-limit headers). Empty: every method.
 *
 * <p>Any method token of RFC 9110 may be named, WebDAV's {@code PROPFIND} or {@code QUERY} as well
 * as {@code GET}. A list naming {@code GET} also limits {@code HEAD}: a servlet's {@code doHead}
 * runs {@code doGet}, and a JAX-RS runtime answers {@code HEAD} with the {@code @GET} method, so
 * leaving {@code HEAD} out would leave the same code unlimited.
 */
final class HttpMethods {

    /** RFC 9110's {@code token}: one or more {@code tchar}. */
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    private HttpMethods() {
    }

    /**
     * Parses comma-separated method tokens, in any case (kept upper case); blank: every method
     * (empty set). {@code GET} brings {@code HEAD} with it.
     *
     * @throws IllegalArgumentException naming {@code 'methods'} and the value
     */
    static Set<String> parse(String value) {
        if (value == null || value.isBlank()) {
            return Set.of();
        }
        Set<String> methods = new LinkedHashSet<>();
        for (String item : value.split(",", -1)) {
            String method = item.trim();
            if (!TOKEN.matcher(method).matches()) {
                throw new IllegalArgumentException("'methods' must be a comma-separated list of HTTP method tokens "
                        + "(e.g. POST,PUT or PROPFIND), got '" + value + "'");
            }
            methods.add(method.toUpperCase(Locale.ROOT));
        }
        return withHead(methods);
    }

    /** {@code methods} with {@code HEAD} added when it names {@code GET}. */
    static Set<String> withHead(Set<String> methods) {
        if (!methods.contains("GET") || methods.contains("HEAD")) {
            return Set.copyOf(methods);
        }
        Set<String> with = new LinkedHashSet<>(methods);
        with.add("HEAD");
        return Set.copyOf(with);
    }

    /**
     * Whether a route limiting {@code methods} (upper case; empty: all) limits a request of
     * {@code method}; a request whose method is unknown ({@code null}) is limited, and so is one
     * spelling a limited method in another case, which code that does not compare methods runs
     * alike.
     */
    static boolean limits(Set<String> methods, String method) {
        // toUpperCase returns the string itself when it has no lower-case letter: no copy for the usual spelling.
        return methods.isEmpty() || method == null || methods.contains(method.toUpperCase(Locale.ROOT));
    }
}
