package dev.sluice.web.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One source of the caller's identity, one item of the {@code key} parameter: a single source
 * ({@code header:NAME}, {@code principal}, {@code param:NAME}, {@code attribute:NAME}, {@code ip}), a composite of
 * several joined by {@code +} ({@code ip+param:username}: every part required), or {@code global} (one
 * budget for the whole route).
 *
 * @param kind  where to look
 * @param name  the header, parameter or attribute name; empty for the other kinds
 * @param parts the single sources of a {@link Kind#COMPOSITE}, in order; empty for the other kinds
 */
public record KeySource(Kind kind, String name, List<KeySource> parts) {

    /** The client address alone, the default {@code key}. */
    public static final List<KeySource> IP = List.of(new KeySource(Kind.IP, ""));

    // '+' joins the parts of a composite source, so no name contains it.
    private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*.^_`|~0-9A-Za-z-]+");
    private static final Pattern PARAM_NAME = Pattern.compile("[^\\s,+]+");

    /** Where a key source looks. */
    public enum Kind {
        /** A request header, {@code header:NAME}. */
        HEADER,
        /** The authenticated user's name, {@code principal}. */
        PRINCIPAL,
        /** A query or form parameter, {@code param:NAME}. */
        PARAM,
        /** The client address, {@code ip} (through trusted proxies only). */
        IP,
        /**
         * A request attribute (JAX-RS: property) the application's own authentication set, such as
         * a tenant or account id, {@code attribute:NAME}: its {@code toString()}.
         */
        ATTRIBUTE,
        /** Several single sources, all required, {@code ip+param:username}. */
        COMPOSITE,
        /** One budget for the whole route, {@code global}. */
        GLOBAL
    }

    /** Validates and copies the components. */
    public KeySource {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
        parts = List.copyOf(parts);
        if ((kind == Kind.COMPOSITE) == parts.isEmpty()) {
            throw new IllegalArgumentException("a composite key source has parts, no other does, got " + kind + " "
                    + parts);
        }
    }

    /**
     * A single source: {@code header:NAME}, {@code principal}, {@code param:NAME},
     * {@code attribute:NAME}, {@code ip} or {@code global}.
     */
    public KeySource(Kind kind, String name) {
        this(kind, name, List.of());
    }

    /**
     * Parses a {@code key} value: comma-separated alternatives, tried in order, each
     * {@code header:NAME}, {@code principal}, {@code param:NAME}, {@code attribute:NAME},
     * {@code ip}, or several of these joined by {@code +} (all required), such as
     * {@code header:X-API-Key,ip}, {@code attribute:tenant+ip} or {@code ip+param:username,ip};
     * or {@code global} alone.
     *
     * @throws IllegalArgumentException naming {@code 'key'} and the value
     */
    public static List<KeySource> parseList(String value) {
        List<KeySource> sources = new ArrayList<>();
        for (String alternative : value.split(",", -1)) {
            if (alternative.trim().equalsIgnoreCase("global")) {
                sources.add(new KeySource(Kind.GLOBAL, ""));
            } else if (alternative.indexOf('+') >= 0) {
                List<KeySource> parts = new ArrayList<>();
                for (String part : alternative.split("\\+", -1)) {
                    if (part.isBlank()) {
                        throw new IllegalArgumentException("'key' has an empty part in '" + alternative.trim()
                                + "' (parts are joined by +, each one of header:NAME, principal, param:NAME, "
                                + "attribute:NAME or ip), got '"
                                + value + "'");
                    }
                    if (part.trim().equalsIgnoreCase("global")) {
                        throw globalAlone(value);
                    }
                    parts.add(single(part, value));
                }
                sources.add(new KeySource(Kind.COMPOSITE, "", parts));
            } else {
                sources.add(single(alternative, value));
            }
        }
        if (sources.size() > 1 && sources.stream().anyMatch(s -> s.kind == Kind.GLOBAL)) {
            throw globalAlone(value);
        }
        return List.copyOf(sources);
    }

    private static IllegalArgumentException globalAlone(String value) {
        return new IllegalArgumentException("'key' global is one budget for the whole route and combines with no other "
                + "source, got '" + value + "'");
    }

    /** One single source of {@code value}, the whole {@code key} (for the message). */
    private static KeySource single(String part, String value) {
        String item = part.trim();
        String lower = item.toLowerCase(Locale.ROOT);
        if (lower.equals("ip")) {
            return new KeySource(Kind.IP, "");
        } else if (lower.equals("principal")) {
            return new KeySource(Kind.PRINCIPAL, "");
        } else if (lower.startsWith("header:") && HEADER_NAME.matcher(item.substring(7)).matches()) {
            return new KeySource(Kind.HEADER, item.substring(7));
        } else if (lower.startsWith("param:") && PARAM_NAME.matcher(item.substring(6)).matches()) {
            return new KeySource(Kind.PARAM, item.substring(6));
        } else if (lower.startsWith("attribute:") && PARAM_NAME.matcher(item.substring(10)).matches()) {
            return new KeySource(Kind.ATTRIBUTE, item.substring(10));
        }
        throw new IllegalArgumentException("'key' must be a comma-separated list of header:NAME, principal, "
                + "param:NAME, attribute:NAME or ip (or of several joined by +, or global alone), got '" + value + "'");
    }

    /** Whether this source reads the client address: it is {@code ip}, or a composite with an {@code ip} part. */
    boolean readsClient() {
        for (int i = 0; i < parts.size(); i++) {
            if (parts.get(i).kind == Kind.IP) {
                return true;
            }
        }
        return kind == Kind.IP;
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
            case ATTRIBUTE -> "attribute:" + name;
            case PRINCIPAL -> "principal";
            case IP -> "ip";
            case GLOBAL -> "global";
            case COMPOSITE -> String.join("+", parts.stream().map(KeySource::toString).toList());
        };
    }
}
