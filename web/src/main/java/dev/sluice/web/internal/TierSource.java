package dev.sluice.web.internal;

import dev.sluice.web.RequestView;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where a request's tier comes from, the {@code tier} parameter: {@code role} (the first tier
 * named in {@code tier-limits} whose role the user has), {@code attribute:NAME} (a request
 * attribute set by the application's own authentication, its string value the tier name) or
 * {@code header:NAME} (a request header: trust it only when your own proxy sets it and strips
 * the client's).
 *
 * @param kind where to look
 * @param name the attribute or header name; empty for {@code role}
 */
public record TierSource(Kind kind, String name) {

    private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    /** Where a tier source looks. */
    public enum Kind {
        /** {@code role}: the user's roles, in the order of {@code tier-limits}. */
        ROLE,
        /** {@code attribute:NAME}: a request attribute (JAX-RS: property). */
        ATTRIBUTE,
        /** {@code header:NAME}: a request header. */
        HEADER
    }

    /** Validates the components. */
    public TierSource {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
    }

    /**
     * Parses a {@code tier} value.
     *
     * @throws IllegalArgumentException naming {@code 'tier'} and the value
     */
    public static TierSource parse(String value) {
        String item = value.trim();
        String lower = item.toLowerCase(Locale.ROOT);
        if (lower.equals("role")) {
            return new TierSource(Kind.ROLE, "");
        } else if (lower.startsWith("attribute:") && !item.substring(10).isBlank()) {
            return new TierSource(Kind.ATTRIBUTE, item.substring(10).trim());
        } else if (lower.startsWith("header:") && HEADER_NAME.matcher(item.substring(7)).matches()) {
            return new TierSource(Kind.HEADER, item.substring(7));
        }
        throw new IllegalArgumentException("'tier' must be role, attribute:NAME or header:NAME, got '" + value + "'");
    }

    /** The tier name this source gives a request, or {@code null}; for {@code role}, see {@link Guard}. */
    String read(RequestView request) {
        return switch (kind) {
            case ATTRIBUTE -> {
                Object value = request.attribute(name);
                yield value == null ? null : value.toString();
            }
            case HEADER -> request.header(name);
            case ROLE -> null;
        };
    }

    @Override
    public String toString() {
        return switch (kind) {
            case ROLE -> "role";
            case ATTRIBUTE -> "attribute:" + name;
            case HEADER -> "header:" + name;
        };
    }
}
