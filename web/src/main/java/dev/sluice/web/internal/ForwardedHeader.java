package dev.sluice.web.internal;

import java.util.Locale;

/**
 * The forwarding header a trusted proxy writes, the {@code forwarded-header} parameter. Only that
 * header is read; the other is ignored entirely, since a client can send it through a proxy that
 * only appends to its own.
 */
public enum ForwardedHeader {
    /** {@code X-Forwarded-For: client, proxy1, proxy2}: the de-facto standard, the default. */
    X_FORWARDED_FOR("x-forwarded-for", "X-Forwarded-For"),
    /** RFC 7239 {@code Forwarded: for=client, for=proxy1}. */
    FORWARDED("forwarded", "Forwarded");

    private final String configName;
    private final String headerName;

    ForwardedHeader(String configName, String headerName) {
        this.configName = configName;
        this.headerName = headerName;
    }

    /** The value in the vocabulary: {@code x-forwarded-for} or {@code forwarded}. */
    public String configName() {
        return configName;
    }

    /** The HTTP header's name. */
    public String headerName() {
        return headerName;
    }

    /**
     * Parses {@code x-forwarded-for} or {@code forwarded}, in any case.
     *
     * @throws IllegalArgumentException naming {@code 'forwarded-header'} and the value
     */
    public static ForwardedHeader parse(String value) {
        String normal = value.trim().toLowerCase(Locale.ROOT);
        for (ForwardedHeader header : values()) {
            if (header.configName.equals(normal)) {
                return header;
            }
        }
        throw new IllegalArgumentException("'forwarded-header' must be x-forwarded-for or forwarded, got '" + value
                + "'");
    }
}
