package dev.sluice.internal;

import java.util.regex.Pattern;

/**
 * Store values as logs, messages and {@code toString}s show them: the secret of a URI's user-info
 * replaced by {@code ***} ({@code redis://app:***@host:6379}, {@code redis://:***@host},
 * {@code redis://***@host}), as are {@code password=} query parameters. Every place that writes a
 * {@code store} value where people read it goes through {@link #redact}; the value itself is kept
 * whole for connecting.
 *
 * <p>Not API: this package may change in any release.
 */
public final class Secrets {

    private static final String HIDDEN = "***";
    private static final Pattern PASSWORD_PARAMETER = Pattern.compile("(?i)([?&;](?:password|pass|pwd)=)[^&;#]*");

    private Secrets() {
    }

    /**
     * {@code store} with its secrets replaced: everything between the scheme and the last
     * {@code @} is user-info, of which the user name before the first {@code :} is kept. Malformed
     * values are redacted the same way (the last {@code @} wins, so a password holding {@code @} or
     * {@code /} is hidden whole); a value without {@code @} or {@code password=}, such as
     * {@code memory} or {@code redisson:PATH}, is returned as it is.
     */
    public static String redact(String store) {
        if (store == null) {
            return "null";
        }
        String text = store;
        int at = text.lastIndexOf('@');
        if (at >= 0) {
            int scheme = text.indexOf("://");
            int start = scheme >= 0 && scheme < at ? scheme + 3 : text.indexOf(':') < at ? text.indexOf(':') + 1 : 0;
            int colon = text.indexOf(':', start);
            String user = colon >= 0 && colon < at ? text.substring(start, colon + 1) : "";
            text = text.substring(0, start) + user + HIDDEN + text.substring(at);
        }
        return text.indexOf('=') < 0 ? text : PASSWORD_PARAMETER.matcher(text).replaceAll("$1" + HIDDEN);
    }
}
