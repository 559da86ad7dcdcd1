package dev.sluice.spring.boot;

import java.util.List;

/**
 * The paths a filter leaves alone ({@code exclude}), in the servlet specification's URL-pattern
 * syntax: exact ({@code /health}), prefix ({@code /actuator/*}, which also matches
 * {@code /actuator} itself; {@code /actuator/**} reads the same) or extension ({@code *.css}).
 * Matched against the request's path inside the application (without the context path), decoded
 * and normalised by the container, so {@code /api/../actuator} is {@code /actuator}.
 *
 * @param patterns the patterns, validated
 */
record PathPatterns(List<String> patterns) {

    static final PathPatterns NONE = new PathPatterns(List.of());

    /**
     * @throws IllegalArgumentException naming a pattern that is neither {@code /...} nor {@code *.ext}
     */
    PathPatterns {
        patterns = List.copyOf(patterns);
        for (String p : patterns) {
            boolean extension = p.startsWith("*.") && p.length() > 2 && p.indexOf('/') < 0 && p.indexOf('*', 1) < 0;
            int star = p.indexOf('*');
            boolean path = p.startsWith("/") && (star < 0 || p.endsWith("/*") && star == p.length() - 1
                    || p.endsWith("/**") && star == p.length() - 2);
            if (!extension && !path) {
                throw new IllegalArgumentException("'exclude' takes path patterns such as /health, /public/* "
                        + "or *.css, got '" + p + "'");
            }
        }
    }

    /** These patterns and {@code more}. */
    PathPatterns and(List<String> more) {
        return more.isEmpty() ? this : new PathPatterns(java.util.stream.Stream.concat(patterns.stream(),
                more.stream()).distinct().toList());
    }

    /** Whether {@code path} (inside the application, starting with {@code /}) is left alone. */
    boolean matches(String path) {
        for (String p : patterns) {
            if (p.startsWith("*.")) {
                if (path.endsWith(p.substring(1)) && path.lastIndexOf('/') < path.length() - p.length() + 1) {
                    return true;
                }
            } else if (p.endsWith("/*") || p.endsWith("/**")) {
                String base = p.substring(0, p.indexOf('*') - 1);
                if (path.equals(base) || path.startsWith(base + "/") || base.isEmpty()) {
                    return true;
                }
            } else if (path.equals(p)) {
                return true;
            }
        }
        return false;
    }

    boolean isEmpty() {
        return patterns.isEmpty();
    }
}
