package dev.sluice.web;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One source of the caller's identity, one item of the {@code key} parameter.
 *
 * @param kind where to look
 * @param name the header or parameter name; empty for {@code principal} and {@code ip}
 */
public record KeySource(Kind kind, String name) {

    /** The client address alone, the default {@code key}. */
    public static final List<KeySource> IP = List.of(new KeySource(Kind.IP, ""));

    private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    private static final Pattern PARAM_NAME = Pattern.compile("[^\\s,]+");

    /** Where a key source looks. */
    public enum Kind {
        /** A request header, {@code header:NAME}. */
        HEADER,
        /** The authenticated user's name, {@code principal}. */
        PRINCIPAL,
        /** A query or form parameter, {@code param:NAME}. */
        PARAM,
        /** The client address, {@code ip} (through trusted proxies only). */
        IP
    }

    /** Validates the components. */
    public KeySource {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
    }

    /**
     * Parses a {@code key} value: comma-separated {@code header:NAME}, {@code principal},
     * {@code param:NAME} or {@code ip}, such as {@code header:X-API-Key,ip}.
     *
     * @throws IllegalArgumentException naming {@code 'key'} and the value
     */
    public static List<KeySource> parseList(String value) {
        List<KeySource> sources = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            String item = part.trim();
            String lower = item.toLowerCase(Locale.ROOT);
            if (lower.equals("ip")) {
                sources.add(new KeySource(Kind.IP, ""));
            } else if (lower.equals("principal")) {
                sources.add(new KeySource(Kind.PRINCIPAL, ""));
            } else if (lower.startsWith("header:") && HEADER_NAME.matcher(item.substring(7)).matches()) {
                sources.add(new KeySource(Kind.HEADER, item.substring(7)));
            } else if (lower.startsWith("param:") && PARAM_NAME.matcher(item.substring(6)).matches()) {
                sources.add(new KeySource(Kind.PARAM, item.substring(6)));
            } else {
                throw new IllegalArgumentException("'key' must be a comma-separated list of header:NAME, principal, "
                        + "param:NAME or ip, got '" + value + "'");
            }
        }
        return List.copyOf(sources);
    }

    /** Key sources as the {@code key} parameter writes them: {@code header:X-API-Key,ip}. */
    static String format(List<KeySource> sources) {
        return String.join(",", sources.stream().map(KeySource::toString).toList());
    }

    @Override
    public String toString() {
        return switch (kind) {
            case HEADER -> "header:" + name;
            case PARAM -> "param:" + name;
            case PRINCIPAL -> "principal";
            case IP -> "ip";
        };
    }
}
