package dev.sluice.web.internal;

import java.util.ArrayList;
import java.util.List;

/** The hops of the forwarding headers, in order, and the address of one hop. */
final class ForwardedHops {

    private ForwardedHops() {
    }

    /** The comma-separated hops of every {@code X-Forwarded-For} value, in order; blank ones kept as {@code ""}. */
    static List<String> xForwardedFor(List<String> values) {
        List<String> hops = new ArrayList<>();
        for (String value : values) {
            int start = 0;
            while (true) {
                int comma = value.indexOf(',', start);
                hops.add(value.substring(start, comma < 0 ? value.length() : comma).trim());
                if (comma < 0) {
                    break;
                }
                start = comma + 1;
            }
        }
        return hops;
    }

    /**
     * The {@code for=} node of every element of every {@code Forwarded} value (RFC 7239), in
     * order, unquoted. An element without {@code for=}, or a malformed one, is {@code ""}: a hop
     * that names nobody. Commas and semicolons inside quoted strings do not split.
     */
    static List<String> forwarded(List<String> values) {
        return forwarded(values, "for");
    }

    /**
     * The {@code name=} parameter ({@code for}, {@code proto}, {@code host}) of every element of
     * every {@code Forwarded} value, in order, unquoted; {@code ""} where an element has none or
     * is malformed, as {@link #forwarded(List)} reads {@code for=}.
     */
    static List<String> forwarded(List<String> values, String name) {
        List<String> hops = new ArrayList<>();
        for (String value : values) {
            int i = 0;
            int n = value.length();
            String node = null;
            boolean malformed = false;
            while (i <= n) {
                // One pair: token "=" ( token / quoted-string ), then ";" or "," or the end.
                int nameStart = skipSpace(value, i);
                int eq = nameStart;
                while (eq < n && value.charAt(eq) != '=' && value.charAt(eq) != ',' && value.charAt(eq) != ';') {
                    eq++;
                }
                String pairValue = null;
                int end;
                if (eq < n && value.charAt(eq) == '=') {
                    int v = skipSpace(value, eq + 1);
                    if (v < n && value.charAt(v) == '"') {
                        StringBuilder unquoted = new StringBuilder();
                        int j = v + 1;
                        boolean closed = false;
                        while (j < n) {
                            char c = value.charAt(j);
                            if (c == '\\' && j + 1 < n) {
                                unquoted.append(value.charAt(j + 1));
                                j += 2;
                            } else if (c == '"') {
                                closed = true;
                                j++;
                                break;
                            } else {
                                unquoted.append(c);
                                j++;
                            }
                        }
                        malformed |= !closed;
                        pairValue = unquoted.toString();
                        end = skipSpace(value, j);
                        if (end < n && value.charAt(end) != ',' && value.charAt(end) != ';') {
                            malformed = true; // text after the closing quote
                            while (end < n && value.charAt(end) != ',' && value.charAt(end) != ';') {
                                end++;
                            }
                        }
                    } else {
                        end = v;
                        while (end < n && value.charAt(end) != ',' && value.charAt(end) != ';') {
                            end++;
                        }
                        pairValue = value.substring(v, end).trim();
                    }
                } else {
                    end = eq;
                    malformed |= !value.substring(nameStart, eq).isBlank(); // a name without a value
                }
                if (pairValue != null && value.substring(nameStart, eq).trim().equalsIgnoreCase(name)) {
                    malformed |= node != null; // two of the name in one element
                    node = pairValue;
                }
                if (end >= n || value.charAt(end) == ',') {
                    hops.add(node == null || malformed ? "" : node);
                    node = null;
                    malformed = false;
                }
                i = end + 1;
            }
        }
        return hops;
    }

    private static int skipSpace(String s, int i) {
        while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
            i++;
        }
        return i;
    }

    /**
     * The address a hop names, or {@code null} if it names none. A port is dropped:
     * {@code 192.0.2.1:4711}, {@code [2001:db8::1]:443}, or an obfuscated {@code [::1]:_p}.
     * {@code unknown}, obfuscated identifiers ({@code _hidden}) and host names are no address.
     */
    static byte[] address(String hop) {
        int n = hop.length();
        if (n == 0) {
            return null;
        }
        if (hop.charAt(0) == '[') {
            int close = hop.indexOf(']');
            if (close < 0 || (close + 1 < n && !isPort(hop, close + 1))) {
                return null;
            }
            return IpLiteral.parse(hop, 1, close);
        }
        int colon = hop.indexOf(':');
        if (colon >= 0 && hop.indexOf(':', colon + 1) < 0) {
            // One colon: an IPv4 address and a port (a bare IPv6 address has at least two).
            byte[] v4 = isPort(hop, colon) ? IpLiteral.parse(hop, 0, colon) : null;
            return v4 != null && v4.length == 4 ? v4 : null;
        }
        return IpLiteral.parse(hop);
    }

    /** Whether {@code s} from {@code colon} is {@code :} and a port: 1 to 5 digits, or an obfuscated {@code _x}. */
    private static boolean isPort(String s, int colon) {
        int n = s.length();
        if (s.charAt(colon) != ':' || colon + 1 >= n || n - colon - 1 > 32) {
            return false;
        }
        if (s.charAt(colon + 1) == '_') {
            for (int i = colon + 2; i < n; i++) {
                char c = s.charAt(i);
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
                        || c == '_' || c == '-')) {
                    return false;
                }
            }
            return n > colon + 2;
        }
        if (n - colon - 1 > 5) {
            return false;
        }
        for (int i = colon + 1; i < n; i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }
}
