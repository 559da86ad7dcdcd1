package dev.sluice.webflux;

import java.util.ArrayList;
import java.util.List;

/**
 * The paths a filter limits, written as servlet {@code url-pattern}s so that one
 * {@code sluice.filters.<name>.url-patterns} means the same on Tomcat and on Netty: {@code /api/*}
 * (the path {@code /api} and everything under it), {@code *.json} (an extension), {@code /} or
 * {@code /*} (every path), {@code ""} (the root only), or an exact path. Matched against the path
 * within the application (without its context path), undecoded. Immutable.
 */
final class UrlPatterns {

    private final List<String> exact = new ArrayList<>();
    private final List<String> prefixes = new ArrayList<>();
    private final List<String> extensions = new ArrayList<>();
    private boolean all;

    private UrlPatterns() {
    }

    /**
     * The patterns of {@code patterns}; none means every path.
     *
     * @throws IllegalArgumentException naming the first pattern that is not a servlet url-pattern
     */
    static UrlPatterns of(List<String> patterns) {
        UrlPatterns out = new UrlPatterns();
        if (patterns.isEmpty()) {
            out.all = true;
        }
        for (String raw : patterns) {
            String p = raw == null ? "" : raw.trim();
            if (p.equals("/") || p.equals("/*")) {
                out.all = true;
            } else if (p.isEmpty()) {
                out.exact.add("/");
            } else if (p.startsWith("*.") && p.indexOf('/') < 0 && p.indexOf('*', 1) < 0 && p.length() > 2) {
                out.extensions.add(p.substring(1));
            } else if (p.startsWith("/") && p.endsWith("/*") && p.indexOf('*') == p.length() - 1) {
                out.prefixes.add(p.substring(0, p.length() - 2));
            } else if (p.startsWith("/") && p.indexOf('*') < 0) {
                out.exact.add(p);
            } else {
                throw new IllegalArgumentException("'url-patterns' must be servlet url-patterns such as /api/*, "
                        + "*.json or /orders, got '" + raw + "'");
            }
        }
        return out;
    }

    /** Whether {@code path} (within the application, starting with {@code /}) is limited. */
    boolean matches(String path) {
        if (all) {
            return true;
        }
        String p = path.isEmpty() ? "/" : path;
        for (String e : exact) {
            if (e.equals(p)) {
                return true;
            }
        }
        for (String prefix : prefixes) {
            if (p.startsWith(prefix) && (p.length() == prefix.length() || p.charAt(prefix.length()) == '/')) {
                return true;
            }
        }
        if (!extensions.isEmpty()) {
            int slash = p.lastIndexOf('/');
            String last = p.substring(slash + 1);
            for (String extension : extensions) {
                if (last.endsWith(extension)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public String toString() {
        if (all) {
            return "[/*]";
        }
        List<String> shown = new ArrayList<>(exact);
        prefixes.forEach(p -> shown.add(p + "/*"));
        extensions.forEach(e -> shown.add("*" + e));
        return shown.toString();
    }
}
