package dev.sluice.web;

import java.util.Locale;

/**
 * Which rate-limit headers responses carry, the {@code headers} parameter. The draft form names
 * its revision ({@code draft-10}); {@code draft} is an alias of {@code draft-10} and stays one, so
 * that a later revision added as, say, {@code draft-11} does not change what existing deployments
 * send.
 */
public enum HeaderStyle {
    /** {@code RateLimit-Limit}, {@code RateLimit-Remaining}, {@code RateLimit-Reset}. */
    LEGACY,
    /**
     * {@code draft-10}: {@code RateLimit-Policy} and {@code RateLimit} as in
     * draft-ietf-httpapi-ratelimit-headers-10, with its {@code quota-exceeded} problem type.
     */
    DRAFT,
    /** Both {@code legacy} and {@code draft-10}. */
    BOTH,
    /** No rate-limit headers ({@code Retry-After} on rejections still). */
    NONE;

    /** The draft revision the draft headers follow. */
    public static final String DRAFT_REVISION = "draft-ietf-httpapi-ratelimit-headers-10";

    /** The value of the {@code headers} parameter: {@code legacy}, {@code draft-10}, {@code both}, {@code none}. */
    public String configName() {
        return this == DRAFT ? "draft-10" : name().toLowerCase(Locale.ROOT);
    }

    /** Whether the legacy headers are sent. */
    public boolean legacy() {
        return this == LEGACY || this == BOTH;
    }

    /** Whether the draft headers are sent. */
    public boolean draft() {
        return this == DRAFT || this == BOTH;
    }

    /**
     * Parses {@code legacy}, {@code draft-10} (or its alias {@code draft}), {@code both} or
     * {@code none}, in any case.
     *
     * @throws IllegalArgumentException naming {@code 'headers'} and the value
     */
    public static HeaderStyle parse(String value) {
        String normal = value.trim().toLowerCase(Locale.ROOT);
        for (HeaderStyle style : values()) {
            if (style.configName().equals(normal) || (style == DRAFT && normal.equals("draft"))) {
                return style;
            }
        }
        throw new IllegalArgumentException("'headers' must be legacy, draft-10 (alias draft), both or none, got '"
                + value + "'");
    }
}
