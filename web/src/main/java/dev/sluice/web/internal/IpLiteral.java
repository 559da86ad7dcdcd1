package dev.sluice.web.internal;

import java.util.Arrays;

/**
 * IP address literals, parsed and written without ever asking DNS: the one parser that
 * {@link Cidr} (trusted proxies) and {@link CallerResolver} (socket peers and forwarded hops)
 * share. A hand-written scanner, no regular expression, no {@link java.net.InetAddress} lookup:
 * a host name is simply not an address.
 *
 * <p>Accepted: dotted-quad IPv4 ({@code 192.0.2.1}); IPv6 in any RFC 4291 text form, in any case,
 * compressed or not, with an embedded IPv4 tail ({@code ::ffff:192.0.2.1}), optionally in brackets
 * ({@code [2001:db8::1]}) and with a zone id ({@code fe80::1%eth0}, dropped). IPv4-mapped IPv6
 * addresses come back as their 4 IPv4 bytes, so that one client is one address whichever way a
 * proxy wrote it.
 */
final class IpLiteral {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private IpLiteral() {
    }

    /** The 4 or 16 bytes of an address literal, or {@code null} if {@code text} is not one. */
    public static byte[] parse(String text) {
        return text == null ? null : parse(text, 0, text.length());
    }

    /** {@link #parse(String)} of {@code text[from, to)}. */
    public static byte[] parse(String text, int from, int to) {
        if (to - from >= 2 && text.charAt(from) == '[' && text.charAt(to - 1) == ']') {
            from++;
            to--;
        }
        if (from >= to || to - from > 64) {
            return null;
        }
        int colon = indexOf(text, ':', from, to);
        if (colon < 0) {
            byte[] v4 = new byte[4];
            return parseIpv4(text, from, to, v4, 0) ? v4 : null;
        }
        int zone = indexOf(text, '%', from, to);
        if (zone >= 0) {
            if (zone == to - 1) {
                return null; // "%" without a zone id
            }
            to = zone;
        }
        byte[] v6 = parseIpv6(text, from, to);
        if (v6 == null) {
            return null;
        }
        return isMappedIpv4(v6) ? new byte[] {v6[12], v6[13], v6[14], v6[15]} : v6;
    }

    /** Whether 16 bytes are an IPv4-mapped IPv6 address, {@code ::ffff:a.b.c.d}. */
    private static boolean isMappedIpv4(byte[] a) {
        for (int i = 0; i < 10; i++) {
            if (a[i] != 0) {
                return false;
            }
        }
        return a[10] == (byte) 0xFF && a[11] == (byte) 0xFF;
    }

    private static int indexOf(String text, char c, int from, int to) {
        for (int i = from; i < to; i++) {
            if (text.charAt(i) == c) {
                return i;
            }
        }
        return -1;
    }

    /** Four decimal octets of 1 to 3 digits, each at most 255, into {@code out[at..at+3]}. */
    private static boolean parseIpv4(String text, int from, int to, byte[] out, int at) {
        int octets = 0;
        int i = from;
        while (true) {
            int value = 0;
            int digits = 0;
            while (i < to && digits < 4) {
                char c = text.charAt(i);
                if (c < '0' || c > '9') {
                    break;
                }
                value = value * 10 + (c - '0');
                digits++;
                i++;
            }
            if (digits == 0 || digits > 3 || value > 255) {
                return false;
            }
            out[at + octets++] = (byte) value;
            if (octets == 4) {
                return i == to;
            }
            if (i >= to || text.charAt(i) != '.') {
                return false;
            }
            i++;
        }
    }

    /** RFC 4291 section 2.2 text: eight groups, one {@code ::}, an optional dotted-quad tail. */
    private static byte[] parseIpv6(String text, int from, int to) {
        byte[] out = new byte[16];
        int groups = 0; // 16-bit groups written so far
        int gap = -1; // the group index where "::" stands
        int i = from;
        if (text.startsWith("::", i)) {
            gap = 0;
            i += 2;
            if (i == to) {
                return out; // "::"
            }
        } else if (text.charAt(i) == ':') {
            return null; // a single leading colon
        }
        while (i < to) {
            int start = i;
            int value = 0;
            while (i < to && i - start < 5) {
                int digit = hexDigit(text.charAt(i));
                if (digit < 0) {
                    break;
                }
                value = (value << 4) | digit;
                i++;
            }
            if (i < to && text.charAt(i) == '.') {
                // An IPv4 tail takes the last two groups.
                if (groups > 6 || !parseIpv4(text, start, to, out, groups * 2)) {
                    return null;
                }
                groups += 2;
                i = to;
                break;
            }
            int length = i - start;
            if (length == 0 || length > 4 || groups == 8) {
                return null;
            }
            out[groups * 2] = (byte) (value >>> 8);
            out[groups * 2 + 1] = (byte) value;
            groups++;
            if (i == to) {
                break;
            }
            if (text.charAt(i) != ':') {
                return null;
            }
            i++;
            if (i < to && text.charAt(i) == ':') {
                if (gap >= 0) {
                    return null; // a second "::"
                }
                gap = groups;
                i++;
                if (i == to) {
                    break;
                }
            } else if (i == to) {
                return null; // a trailing single colon
            }
        }
        if (gap < 0) {
            return groups == 8 ? out : null;
        }
        if (groups == 8) {
            return null; // "::" must stand for at least one group
        }
        // Move the groups after the gap to the end.
        int tail = (groups - gap) * 2;
        System.arraycopy(out, gap * 2, out, 16 - tail, tail);
        Arrays.fill(out, gap * 2, 16 - tail, (byte) 0);
        return out;
    }

    /**
     * The canonical text of 4 or 16 address bytes: dotted quad, or RFC 5952 IPv6 (lower case, no
     * leading zeros, the longest run of two or more zero groups, the first of equals, as {@code ::}).
     */
    public static String format(byte[] address) {
        if (address.length == 4) {
            return (address[0] & 0xFF) + "." + (address[1] & 0xFF) + "." + (address[2] & 0xFF) + "."
                    + (address[3] & 0xFF);
        }
        if (address.length != 16) {
            throw new IllegalArgumentException("an address has 4 or 16 bytes, got " + address.length);
        }
        int bestStart = -1;
        int bestLength = 1;
        for (int g = 0; g < 8; ) {
            if (group(address, g) != 0) {
                g++;
                continue;
            }
            int start = g;
            while (g < 8 && group(address, g) == 0) {
                g++;
            }
            if (g - start > bestLength) {
                bestStart = start;
                bestLength = g - start;
            }
        }
        StringBuilder text = new StringBuilder(39);
        for (int g = 0; g < 8; g++) {
            if (g == bestStart) {
                text.append("::");
                g += bestLength - 1;
                continue;
            }
            if (text.length() > 0 && text.charAt(text.length() - 1) != ':') {
                text.append(':');
            }
            appendHex(text, group(address, g));
        }
        return text.toString();
    }

    /** An ASCII hex digit's value, or -1 (never a Unicode digit of another script). */
    private static int hexDigit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    private static int group(byte[] a, int g) {
        return ((a[g * 2] & 0xFF) << 8) | (a[g * 2 + 1] & 0xFF);
    }

    private static void appendHex(StringBuilder text, int value) {
        boolean started = false;
        for (int shift = 12; shift >= 0; shift -= 4) {
            int digit = (value >>> shift) & 0xF;
            if (digit != 0 || started || shift == 0) {
                text.append(HEX[digit]);
                started = true;
            }
        }
    }
}
