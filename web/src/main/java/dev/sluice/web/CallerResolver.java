package dev.sluice.web;

import java.util.List;
import java.util.Objects;

/**
 * Resolves the caller identity of a request from the configured key sources, tried in order;
 * the first present wins (a composite one when all its parts are), and {@code ip} is always present.
 *
 * <h2>The client address</h2>
 *
 * <p>The client address is the socket peer, unless the peer is a trusted proxy. Then the one
 * forwarding header named by {@code forwarded-header} ({@code X-Forwarded-For} by default, or
 * {@code Forwarded: for=}) is walked from the right, as Tomcat's {@code RemoteIpValve} does: each
 * hop was written by the proxy to its right, so hops are believed only while that proxy is
 * trusted, and the first hop that is not a trusted proxy is the client. The other forwarding
 * header is never read, so a client cannot slip its own past a proxy that only appends to the
 * configured one. A forwarding header from an untrusted peer is ignored.
 *
 * <p>A hop may carry a port ({@code 192.0.2.1:4711}, {@code [2001:db8::1]:443}); it is dropped. A
 * hop that names no address ({@code unknown}, an obfuscated {@code _hidden}, a {@code Forwarded}
 * element without {@code for=}, anything unparseable) means the proxy that wrote it could not or
 * would not say who its client was. Sluice does not then walk further left, into values the client
 * wrote itself: the caller is the trusted proxy that wrote the unidentifiable hop (the hop to its
 * right, or the socket peer), so all such requests through it share its budget.
 *
 * <h2>Normalisation</h2>
 *
 * <p>Addresses are parsed as literals only (never looked up) by {@link IpLiteral} and written in
 * one canonical form, so one client is one caller however it is spelled: IPv4-mapped IPv6
 * ({@code ::ffff:192.0.2.1}) is IPv4, IPv6 is RFC 5952 text (lower case, compressed), brackets and
 * zone ids are dropped. This applies to the socket peer too (Jetty reports {@code 0:0:0:0:0:0:0:1}
 * where Tomcat reports {@code ::1}). An IPv6 client is keyed by its {@code ipv6-prefix} network,
 * {@code ip~2001:db8:1:2::/64} by default, because one subscriber is given a whole /64 and can
 * rotate through it for free; an IPv4 client by its address, {@code ip~192.0.2.1}. With
 * {@code ipv6-prefix=128} an IPv6 client is keyed by its address, without a {@code /128}.
 *
 * <p>Identities are prefixed by their kind ({@code ip~}, {@code user~}, {@code key~}) so that an
 * API key cannot pose as an address ({@code attr~} for an attribute the application set); a composite source's identity is {@code all~} and its parts'
 * identities, each prefixed by its length, and {@code global} is the one identity {@code global~}. See {@code dev.sluice.internal.Keys} for how an identity becomes a storage key.
 *
 * <p>Immutable and thread-safe; built once at start-up, so that nothing is parsed per request but
 * the request's own addresses.
 */
final class CallerResolver {

    /** The identity of {@code key=global}: every request of the route is this one caller. */
    static final String GLOBAL = "global~";

    private final KeySource[] sources;
    private final Cidr[] trusted;
    private final ForwardedHeader forwardedHeader;
    private final int ipv6Prefix;
    private final String ipv6Suffix;

    /**
     * A resolver.
     *
     * @param sources         the key sources, tried in order
     * @param trustedProxies  CIDRs, as {@link WebSettings#trustedProxies()} holds them
     * @param forwardedHeader the one forwarding header believed from trusted proxies
     * @param ipv6Prefix      the network IPv6 clients are keyed by, 32 to 128
     */
    CallerResolver(List<KeySource> sources, List<String> trustedProxies, ForwardedHeader forwardedHeader,
                          int ipv6Prefix) {
        this.sources = sources.toArray(new KeySource[0]);
        this.trusted = trustedProxies.stream().map(CallerResolver::cidr).toArray(Cidr[]::new);
        this.forwardedHeader = Objects.requireNonNull(forwardedHeader, "forwardedHeader");
        this.ipv6Prefix = WebSettings.checkIpv6Prefix(ipv6Prefix);
        this.ipv6Suffix = "/" + ipv6Prefix;
    }

    /** The resolver of {@code key} with the client-address settings of {@code web}. */
    CallerResolver(List<KeySource> key, WebSettings web) {
        this(key, web.trustedProxies(), web.forwardedHeader(), web.ipv6Prefix());
    }

    private static Cidr cidr(String text) {
        Cidr cidr = Cidr.parse(text);
        if (cidr == null) {
            throw new IllegalArgumentException("'trusted-proxies' must be comma-separated CIDRs or IP addresses "
                    + "(e.g. 10.0.0.0/8, ::1), got '" + text + "'");
        }
        return cidr;
    }

    /** The caller identity of a request. */
    String resolve(RequestView request) {
        for (KeySource source : sources) {
            String value = identity(source, request);
            if (value != null) {
                return value;
            }
        }
        return "ip~" + clientAddress(request);
    }

    /** The identity one source gives, or {@code null} if the request lacks it. */
    private String identity(KeySource source, RequestView request) {
        return switch (source.kind()) {
            case HEADER -> prefixed("key~", request.header(source.name()));
            case PARAM -> prefixed("key~", request.param(source.name()));
            case ATTRIBUTE -> attribute(request.attribute(source.name()));
            case PRINCIPAL -> prefixed("user~", request.principal());
            case IP -> "ip~" + clientAddress(request);
            case GLOBAL -> GLOBAL;
            case COMPOSITE -> composite(source.parts(), request);
        };
    }

    /**
     * The identity of a composite source, {@code all~} and each part's identity prefixed by its
     * length ({@code all~12:ip~192.0.2.1|9:key~alice|}), or {@code null} if any part is missing.
     * The length prefixes make the encoding injective: no value a client sends (say a user name
     * holding {@code |} or {@code 9:}) can make two different tuples of parts one identity, and the
     * {@code all~} prefix keeps composites apart from single identities.
     */
    private String composite(List<KeySource> parts, RequestView request) {
        StringBuilder out = new StringBuilder(64).append("all~");
        for (KeySource part : parts) {
            String value = identity(part, request);
            if (value == null) {
                return null;
            }
            out.append(value.length()).append(':').append(value).append('|');
        }
        return out.toString();
    }

    /** An attribute's identity, {@code attr~} and its text: set by the application, so its own namespace. */
    private static String attribute(Object value) {
        return value == null ? null : prefixed("attr~", value.toString());
    }

    private static String prefixed(String prefix, String value) {
        return value == null || value.isBlank() ? null : prefix + value.trim();
    }

    /**
     * The client's address as an identity: normalised, an IPv6 address reduced to its
     * {@code ipv6-prefix} network ({@code 2001:db8:1:2::/64}). A socket peer that is no address
     * literal (a runtime that cannot tell, a Unix socket) is returned as the container gave it.
     */
    String clientAddress(RequestView request) {
        byte[] client = clientBytes(request);
        return client != null ? identity(client) : String.valueOf(request.remoteAddr());
    }

    /**
     * The client's whole address (4 or 16 bytes), found as for {@code ip}; {@code null} if the
     * socket peer is no address literal.
     */
    byte[] clientBytes(RequestView request) {
        byte[] peerAddress = IpLiteral.parse(request.remoteAddr());
        if (peerAddress == null) {
            return null;
        }
        if (trusted.length == 0 || !isTrusted(peerAddress)) {
            return peerAddress;
        }
        List<String> hops = forwardedHeader == ForwardedHeader.FORWARDED
                ? ForwardedHops.forwarded(request.headers("Forwarded"))
                : ForwardedHops.xForwardedFor(request.headers("X-Forwarded-For"));
        byte[] reporter = peerAddress; // the trusted proxy that wrote the hop being looked at
        for (int i = hops.size() - 1; i >= 0; i--) {
            byte[] hop = ForwardedHops.address(hops.get(i));
            if (hop == null) {
                // unknown, obfuscated or garbage: the client cannot be identified, and anything further
                // left is the client's own writing. The proxy that said so pays.
                return reporter;
            }
            if (!isTrusted(hop)) {
                return hop;
            }
            reporter = hop;
        }
        return peerAddress; // every hop is a trusted proxy: the peer is the caller
    }

    /** The canonical text of an address as an identity: IPv4 as it is, IPv6 masked to the prefix. */
    private String identity(byte[] address) {
        if (address.length == 4 || ipv6Prefix == 128) {
            return IpLiteral.format(address);
        }
        byte[] network = address.clone();
        int full = ipv6Prefix / 8;
        int rest = ipv6Prefix % 8;
        if (rest != 0) {
            network[full] &= (byte) (0xFF << (8 - rest));
            full++;
        }
        for (int i = full; i < 16; i++) {
            network[i] = 0;
        }
        return IpLiteral.format(network) + ipv6Suffix;
    }

    private boolean isTrusted(byte[] address) {
        for (Cidr cidr : trusted) {
            if (cidr.contains(address)) {
                return true;
            }
        }
        return false;
    }
}
