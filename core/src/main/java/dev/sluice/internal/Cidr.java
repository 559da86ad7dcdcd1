package dev.sluice.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * An IPv4 or IPv6 network, {@code 10.0.0.0/8} or {@code ::1/128}, parsed without ever asking DNS.
 *
 * <p>Not API: this package may change in any release.
 */
public final class Cidr {

    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]{2,45}");

    private final byte[] network;
    private final int prefix;

    private Cidr(byte[] network, int prefix) {
        this.network = network;
        this.prefix = prefix;
        int full = prefix / 8;
        int rest = prefix % 8;
        if (full < network.length) {
            network[full] &= (byte) (0xFF << (8 - rest));
            Arrays.fill(network, full + 1, network.length, (byte) 0);
        }
    }

    /** Parses {@code address} or {@code address/prefix}; {@code null} if malformed. */
    public static Cidr parse(String text) {
        int slash = text.indexOf('/');
        byte[] address = address(slash < 0 ? text : text.substring(0, slash));
        if (address == null) {
            return null;
        }
        int bits = address.length * 8;
        int prefix = bits;
        if (slash >= 0) {
            String p = text.substring(slash + 1);
            if (!p.matches("\\d{1,3}")) {
                return null;
            }
            prefix = Integer.parseInt(p);
            if (prefix > bits) {
                return null;
            }
        }
        return new Cidr(address, prefix);
    }

    /**
     * The bytes of an IP address literal (4 or 16), or {@code null} if {@code text} is not one.
     * IPv4-mapped IPv6 addresses come back as 4 bytes, as {@link InetAddress} gives them.
     */
    public static byte[] address(String text) {
        if (text == null) {
            return null;
        }
        if (IPV4.matcher(text).matches()) {
            String[] parts = text.split("\\.");
            byte[] bytes = new byte[4];
            for (int i = 0; i < 4; i++) {
                int octet = Integer.parseInt(parts[i]);
                if (octet > 255) {
                    return null;
                }
                bytes[i] = (byte) octet;
            }
            return bytes;
        }
        String literal = text.startsWith("[") && text.endsWith("]") ? text.substring(1, text.length() - 1) : text;
        if (literal.indexOf(':') >= 0 && IPV6.matcher(literal).matches()) {
            try {
                // A literal containing ':' is parsed, never looked up; a malformed one throws.
                return InetAddress.getByName(literal).getAddress();
            } catch (UnknownHostException | SecurityException e) {
                return null;
            }
        }
        return null;
    }

    /** Whether the address, given as its bytes, lies in this network. */
    public boolean contains(byte[] address) {
        if (address == null || address.length != network.length) {
            return false;
        }
        int full = prefix / 8;
        for (int i = 0; i < full; i++) {
            if (address[i] != network[i]) {
                return false;
            }
        }
        int rest = prefix % 8;
        return rest == 0 || (address[full] & (0xFF << (8 - rest)) & 0xFF) == (network[full] & 0xFF);
    }

    @Override
    public String toString() {
        try {
            return InetAddress.getByAddress(network).getHostAddress() + "/" + prefix;
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // impossible: the length is 4 or 16
        }
    }
}
