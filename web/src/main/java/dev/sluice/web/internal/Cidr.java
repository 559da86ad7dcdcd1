package dev.sluice.web.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * An IPv4 or IPv6 network, {@code 10.0.0.0/8} or {@code ::1/128}, parsed without ever asking DNS
 * (addresses by {@link IpLiteral}, the one address parser). Parsed once at start-up; matching an
 * address is a byte comparison. Immutable; equal when the normalised networks are.
 */
public final class Cidr {

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
    static Cidr parse(String text) {
        int slash = text.indexOf('/');
        String literal = slash < 0 ? text : text.substring(0, slash);
        byte[] address = address(literal);
        if (address == null) {
            return null;
        }
        int bits = address.length * 8;
        // ::ffff:10.0.0.0/104 is the IPv4 network 10.0.0.0/8: mapped addresses are matched as IPv4.
        int mapped = address.length == 4 && literal.indexOf(':') >= 0 ? 96 : 0;
        int prefix = bits;
        if (slash >= 0) {
            String p = text.substring(slash + 1);
            if (!p.matches("\\d{1,3}")) {
                return null;
            }
            prefix = Integer.parseInt(p) - mapped;
            if (prefix < 0 || prefix > bits) {
                return null;
            }
        }
        return new Cidr(address, prefix);
    }

    /**
     * Parses the value of {@code parameter}, comma-separated CIDRs or addresses such as
     * {@code 10.0.0.0/8, ::1} (blank items skipped).
     *
     * @throws IllegalArgumentException naming the parameter and the value if an item is malformed
     */
    static List<Cidr> parseList(Parameter parameter, String value) {
        List<Cidr> cidrs = new ArrayList<>();
        for (String part : value.split(",")) {
            if (part.isBlank()) {
                continue;
            }
            Cidr cidr = Cidr.parse(part.trim());
            if (cidr == null) {
                throw new IllegalArgumentException("'" + parameter.configName()
                        + "' must be comma-separated CIDRs or IP "
                        + "addresses (e.g. 10.0.0.0/8, ::1), got '" + value + "'");
            }
            cidrs.add(cidr);
        }
        return List.copyOf(cidrs);
    }

    /**
     * The bytes of an IP address literal (4 or 16), or {@code null} if {@code text} is not one;
     * see {@link IpLiteral#parse(String)}. IPv4-mapped IPv6 addresses come back as 4 bytes.
     */
    static byte[] address(String text) {
        return IpLiteral.parse(text);
    }

    /** Whether the address, given as its bytes ({@code null}: none), lies in this network. */
    boolean contains(byte[] address) {
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

    /** Whether {@code address} lies in one of {@code networks}. */
    static boolean anyContains(Cidr[] networks, byte[] address) {
        for (Cidr cidr : networks) {
            if (cidr.contains(address)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Cidr that && prefix == that.prefix && Arrays.equals(network, that.network);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(network) + prefix;
    }

    /** The normalised network, {@code 10.0.0.0/8} or {@code 0:0:0:0:0:0:0:1/128}. */
    @Override
    public String toString() {
        try {
            // getByAddress formats the bytes; it never looks anything up.
            return InetAddress.getByAddress(network).getHostAddress() + "/" + prefix;
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // impossible: the length is 4 or 16
        }
    }
}
