package dev.sluice.web.internal;

import dev.sluice.web.RequestView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

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
 * configured one. A forwarding header from an untrusted peer is ignored; when that peer is a
 * loopback or private address ({@code 127/8}, {@code 10/8}, {@code 172.16/12}, {@code 192.168/16},
 * {@code 169.254/16}, {@code ::1}, {@code fc00::/7}, {@code fe80::/10}), it is most likely a load
 * balancer that {@code trusted-proxies} forgot, whose clients then share one budget: the first
 * such request is logged, once per route (a servlet filter; a JAX-RS feature shares one warning
 * among its resource methods), and nothing else changes.
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
 * API key cannot pose as an address ({@code attr~} for an attribute the application set); a composite source's identity
 * is {@code all~} and its parts'
 * identities, each prefixed by its length, and {@code global} is the one identity {@code global~}. See
 * {@code dev.sluice.internal.Keys} for how an identity becomes a storage key.
 *
 * <p>Immutable (but for the once-only warning) and thread-safe; built once at start-up, so that
 * nothing is parsed per request but the request's own addresses.
 */
final class CallerResolver {

    /** The identity of {@code key=global}: every request of the route is this one caller. */
    static final String GLOBAL = "global~";
    /** A client address not looked for yet (compared by identity; no address has no bytes). */
    static final byte[] UNRESOLVED = new byte[0];

    private static final Logger LOG = LoggerFactory.getLogger(CallerResolver.class);

    private final KeySource[] sources;
    private final Cidr[] trusted;
    private final ForwardedHeader forwardedHeader;
    private final int ipv6Prefix;
    private final String ipv6Suffix;
    private final String where;
    /**
     * Whether an untrusted private peer's forwarding header was logged; after that, one volatile
     * read per request. Shared by the resolvers of one JAX-RS feature ({@link #sharingWarningWith}).
     */
    private final AtomicBoolean warnedUntrusted;

    /**
     * A resolver.
     *
     * @param sources the key sources, tried in order
     * @param callers the trusted proxies, the forwarding header believed from them and the network
     *                IPv6 clients are keyed by
     * @param where   the route, for the log line, such as {@code filter 'search'}
     */
    CallerResolver(List<KeySource> sources, CallerRules callers, String where) {
        this.where = Objects.requireNonNull(where, "where");
        this.warnedUntrusted = new AtomicBoolean();
        this.sources = sources.toArray(new KeySource[0]);
        this.trusted = callers.trustedProxies().toArray(new Cidr[0]);
        this.forwardedHeader = callers.forwardedHeader();
        this.ipv6Prefix = callers.ipv6Prefix();
        this.ipv6Suffix = "/" + ipv6Prefix;
    }

    private CallerResolver(CallerResolver from, AtomicBoolean warned) {
        this.sources = from.sources;
        this.trusted = from.trusted;
        this.forwardedHeader = from.forwardedHeader;
        this.ipv6Prefix = from.ipv6Prefix;
        this.ipv6Suffix = from.ipv6Suffix;
        this.where = from.where;
        this.warnedUntrusted = warned;
    }

    /** This resolver logging its once-only warning at most once together with {@code other}. */
    CallerResolver sharingWarningWith(CallerResolver other) {
        return new CallerResolver(this, other.warnedUntrusted);
    }

    /** A resolver whose warning names no route. */
    CallerResolver(List<KeySource> sources, CallerRules callers) {
        this(sources, callers, "Sluice");
    }

    /** The resolver of {@code key} with the client-address settings of {@code web}, for the route {@code where}. */
    CallerResolver(List<KeySource> key, WebSettings web, String where) {
        this(key, web.callers(), where);
    }

    /** The resolver of {@code key} with the client-address settings of {@code web}. */
    CallerResolver(List<KeySource> key, WebSettings web) {
        this(key, web, "Sluice");
    }

    /** The key sources, in order. */
    List<KeySource> sources() {
        return List.of(sources);
    }

    /** The caller identity of a request. */
    String resolve(RequestView request) {
        return resolve(request, UNRESOLVED);
    }

    /**
     * The caller identity of a request whose client address is {@code client}, as
     * {@link #clientBytes} found it, or {@link #UNRESOLVED}: then it is found here, once, if a key
     * source asks for it.
     */
    String resolve(RequestView request, byte[] client) {
        for (KeySource source : sources) {
            if (client == UNRESOLVED && source.readsClient()) {
                client = clientBytes(request);
            }
            String value = identity(source, request, client);
            if (value != null) {
                return value;
            }
        }
        return "ip~" + clientAddress(request, client == UNRESOLVED ? clientBytes(request) : client);
    }

    /**
     * The identities a caller given as a client sends it has under these key sources, in their
     * order, none twice: an address ({@code 2001:db8::7} becomes its {@code ipv6-prefix} network),
     * a header, parameter, attribute or principal value, the parts of a composite joined by
     * {@code +} ({@code 192.0.2.1+alice}; a part holding {@code +} itself gives every way the
     * value splits), anything for {@code global}. Built by the very code
     * that names a request's caller, from a request that carries the value where each source
     * looks: a value that no source could have read (not an address for {@code ip}, too few parts
     * for a composite) gives none.
     */
    List<String> identitiesOf(String sent) {
        java.util.LinkedHashSet<String> out = new java.util.LinkedHashSet<>();
        String value = sent.trim();
        for (KeySource source : sources) {
            List<KeySource> parts = source.kind() == KeySource.Kind.COMPOSITE ? source.parts() : List.of(source);
            List<String[]> splits = source.kind() == KeySource.Kind.COMPOSITE ? splits(value, parts.size())
                    : List.<String[]>of(new String[] {value});
            for (String[] values : splits) {
                SentCaller request = new SentCaller(parts, values);
                if (request.readable()) {
                    String identity = identity(source, request,
                            source.readsClient() ? clientBytes(request) : UNRESOLVED);
                    if (identity != null) {
                        out.add(identity);
                    }
                }
            }
        }
        return List.copyOf(out);
    }

    /** The most ways of splitting a composite caller that are tried; more gives none. */
    private static final int MAX_SPLITS = 256;

    /**
     * The ways {@code value} splits into {@code n} parts at its {@code +}: one when it has
     * {@code n - 1}; when a part holds {@code +} itself (a base64 API key, {@code ab+cd==}), every
     * way, for a reset resets each identity the caller may be (at most {@link #MAX_SPLITS}, else none).
     */
    private static List<String[]> splits(String value, int n) {
        String[] pieces = value.split("\\+", -1);
        if (pieces.length < n) {
            return List.of();
        }
        List<String[]> out = new java.util.ArrayList<>();
        split(pieces, 0, n, new String[n], out);
        return out.size() > MAX_SPLITS ? List.of() : out;
    }

    /**
     * Adds to {@code out} every way of joining {@code pieces[from..]} into parts {@code n - left..n - 1} of
     * {@code parts}.
     */
    private static void split(String[] pieces, int from, int left, String[] parts, List<String[]> out) {
        if (out.size() > MAX_SPLITS) {
            return;
        }
        int part = parts.length - left;
        if (left == 1) {
            parts[part] = String.join("+", java.util.Arrays.asList(pieces).subList(from, pieces.length));
            out.add(parts.clone());
            return;
        }
        // Part `part` takes pieces[from..end); every later part needs at least one piece.
        for (int end = from + 1; end <= pieces.length - (left - 1); end++) {
            parts[part] = String.join("+", java.util.Arrays.asList(pieces).subList(from, end));
            split(pieces, end, left - 1, parts, out);
        }
    }

    /**
     * A request carrying each part's value where that part looks, and nothing else: no
     * forwarding header, so an address is its own client.
     */
    private static final class SentCaller implements RequestView {
        private final List<KeySource> parts;
        private final String[] values;

        SentCaller(List<KeySource> parts, String[] values) {
            this.parts = parts;
            this.values = values;
        }

        /** Whether every {@code ip} part is an address literal (another value is no address a request has). */
        boolean readable() {
            for (int i = 0; i < values.length; i++) {
                if (parts.get(i).kind() == KeySource.Kind.IP && IpLiteral.parse(values[i].trim()) == null) {
                    return false;
                }
            }
            return true;
        }

        private String of(KeySource.Kind kind, String name) {
            for (int i = 0; i < values.length; i++) {
                KeySource part = parts.get(i);
                if (part.kind() == kind && (name == null || part.name().equalsIgnoreCase(name))) {
                    return values[i];
                }
            }
            return null;
        }

        @Override
        public String header(String name) {
            return of(KeySource.Kind.HEADER, name);
        }

        @Override
        public List<String> headers(String name) {
            String value = header(name);
            return value == null ? List.of() : List.of(value);
        }

        @Override
        public String principal() {
            return of(KeySource.Kind.PRINCIPAL, null);
        }

        @Override
        public String param(String name) {
            return of(KeySource.Kind.PARAM, name);
        }

        @Override
        public String remoteAddr() {
            String address = of(KeySource.Kind.IP, null);
            return address == null ? null : address.trim();
        }

        @Override
        public Object attribute(String name) {
            return of(KeySource.Kind.ATTRIBUTE, name);
        }

        @Override
        public void setAttribute(String name, Object value) {
            // nothing is decided for it
        }
    }

    /**
     * The identity one source gives, or {@code null} if the request lacks it; {@code client} is the
     * request's client address as {@link #clientBytes} found it, given whenever the source
     * {@linkplain KeySource#readsClient() reads it}.
     */
    private String identity(KeySource source, RequestView request, byte[] client) {
        return switch (source.kind()) {
            case HEADER -> prefixed("key~", request.header(source.name()));
            case PARAM -> prefixed("key~", request.param(source.name()));
            case ATTRIBUTE -> attribute(request.attribute(source.name()));
            case PRINCIPAL -> prefixed("user~", request.principal());
            case IP -> "ip~" + clientAddress(request, client);
            case GLOBAL -> GLOBAL;
            case COMPOSITE -> composite(source.parts(), request, client);
        };
    }

    /**
     * The identity of a composite source, {@code all~} and each part's identity prefixed by its
     * length ({@code all~12:ip~192.0.2.1|9:key~alice|}), or {@code null} if any part is missing.
     * The length prefixes make the encoding injective: no value a client sends (say a user name
     * holding {@code |} or {@code 9:}) can make two different tuples of parts one identity, and the
     * {@code all~} prefix keeps composites apart from single identities.
     */
    private String composite(List<KeySource> parts, RequestView request, byte[] client) {
        StringBuilder out = new StringBuilder(64).append("all~");
        for (KeySource part : parts) {
            String value = identity(part, request, client);
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
     * The client's address {@code client} (as {@link #clientBytes} found it) as an identity:
     * normalised, an IPv6 address reduced to its {@code ipv6-prefix} network
     * ({@code 2001:db8:1:2::/64}). A socket peer that is no address literal (a runtime that cannot
     * tell, a Unix socket) is returned as the container gave it.
     */
    private String clientAddress(RequestView request, byte[] client) {
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
        if (trusted.length == 0 || !Cidr.anyContains(trusted, peerAddress)) {
            if (!warnedUntrusted.get() && isLocal(peerAddress)) {
                warnOfUntrustedProxy(request, peerAddress);
            }
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
            if (!Cidr.anyContains(trusted, hop)) {
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

    /**
     * Logs, once, that a loopback or private peer that is not trusted sent a forwarding header:
     * most likely a load balancer missing from {@code trusted-proxies}, whose clients all share
     * its budget. Only the log line; the peer stays the caller.
     */
    private void warnOfUntrustedProxy(RequestView request, byte[] peer) {
        String header = request.header("X-Forwarded-For") != null ? "X-Forwarded-For"
                : request.header("Forwarded") != null ? "Forwarded" : null;
        if (header != null && warnedUntrusted.compareAndSet(false, true)) {
            String address = IpLiteral.format(peer);
            LOG.warn("{}: a request from {} carries {}, but {} is not in 'trusted-proxies', so the header is ignored "
                    + "and every client behind that proxy shares one budget; if it is your load balancer or reverse "
                    + "proxy, "
                    + "set 'trusted-proxies' (JAX-RS: 'sluice.trusted-proxies') to its address or network, e.g. "
                    + "10.0.0.0/8, and 'forwarded-header' to the header it writes. Logged once", where, address, header,
                    address);
        }
    }

    /**
     * Whether an address is loopback, private or link-local: {@code 127/8}, {@code 10/8},
     * {@code 172.16/12}, {@code 192.168/16}, {@code 169.254/16}, {@code ::1}, {@code fc00::/7}
     * (unique local) or {@code fe80::/10}. Where proxies of one's own network sit.
     */
    static boolean isLocal(byte[] address) {
        int a = address[0] & 0xFF;
        int b = address[1] & 0xFF;
        if (address.length == 4) {
            return a == 127 || a == 10 || (a == 172 && (b & 0xF0) == 16) || (a == 192 && b == 168)
                    || (a == 169 && b == 254);
        }
        if ((a & 0xFE) == 0xFC || (a == 0xFE && (b & 0xC0) == 0x80)) {
            return true;
        }
        for (int i = 0; i < 15; i++) {
            if (address[i] != 0) {
                return false;
            }
        }
        return address[15] == 1;
    }
}
