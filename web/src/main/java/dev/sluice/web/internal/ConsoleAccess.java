package dev.sluice.web.internal;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * What a console checks of every request before its role: the {@code Host} it was addressed by
 * and, for a change, that it comes from the console's own page. Both judge the address the
 * browser used, which behind a proxy that ends TLS is not the container's: a trusted proxy's
 * forwarding header says it ({@code X-Forwarded-Proto} and {@code X-Forwarded-Host} beside
 * {@code X-Forwarded-For}, or {@code proto=} and {@code host=} of {@code Forwarded}), believed
 * from peers in {@code trusted-proxies} only, as for {@code key=ip}.
 *
 * <p>Without authentication a console answers only a {@code Host} that is a loopback name or
 * address ({@code localhost}, {@code 127.0.0.0/8}, {@code ::1}) or one of {@code allowed-hosts}:
 * otherwise a page on the internal network could reach it under a name of its own, rebound to
 * the console's address (DNS rebinding), and change limits. With authentication,
 * {@code allowed-hosts}, when given, is checked too.
 *
 * <p>Immutable and thread-safe; parsed once at start-up.
 */
public final class ConsoleAccess {

    /** The parameter naming the hosts served besides the loopback, {@value}. */
    public static final String ALLOWED_HOSTS = "allowed-hosts";

    // A DNS name (labels of letters, digits, '-' and '_'); an IP literal is checked apart.
    private static final Pattern HOST_NAME =
            Pattern.compile("[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*");
    private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");
    /** The longest piece of a refused {@code Host} quoted back. */
    private static final int QUOTED = 100;

    private final Cidr[] trusted;
    private final ForwardedHeader forwardedHeader;
    private final Set<String> allowedHosts;
    private final boolean hostChecked;
    /** {@code allowed-hosts} as the application names it, for the refusal. */
    private final String hostsName;

    private ConsoleAccess(List<Cidr> trusted, ForwardedHeader forwardedHeader, Set<String> allowedHosts,
                          boolean authenticated, String hostsName) {
        this.hostsName = hostsName;
        this.trusted = trusted.toArray(new Cidr[0]);
        this.forwardedHeader = forwardedHeader;
        this.allowedHosts = Set.copyOf(allowedHosts);
        this.hostChecked = !authenticated || !allowedHosts.isEmpty();
    }

    /**
     * Parses {@code trusted-proxies} and {@code forwarded-header} (as the filters do) and
     * {@code allowed-hosts} (comma-separated host names or IP literals, without a port) from
     * {@code lookup}; {@code null} or blank: absent.
     *
     * @param authenticated whether the console requires a user; without one, the {@code Host} is checked
     * @param hostsName     {@code allowed-hosts} as the application names it (a JAX-RS property), for the refusal
     * @throws IllegalArgumentException naming the parameter and its value
     */
    public static ConsoleAccess parse(Function<String, String> lookup, boolean authenticated, String hostsName) {
        List<Cidr> trusted = Parameter.TRUSTED_PROXIES.parse(lookup,
                v -> Cidr.parseList(Parameter.TRUSTED_PROXIES, v), List.of());
        ForwardedHeader header = Parameter.FORWARDED_HEADER.parse(lookup, ForwardedHeader::parse,
                ForwardedHeader.X_FORWARDED_FOR);
        Set<String> hosts = new LinkedHashSet<>();
        String raw = lookup.apply(ALLOWED_HOSTS);
        if (raw != null && !raw.isBlank()) {
            for (String item : raw.split(",", -1)) {
                String host = normalHost(item.trim());
                if (host == null) {
                    throw new IllegalArgumentException("'" + ALLOWED_HOSTS + "' must be a comma-separated list of host "
                            + "names or IP addresses without a port or scheme (e.g. console.example.com, 10.0.0.5), "
                            + "got '"
                            + raw + "'");
                }
                hosts.add(host);
            }
        }
        return new ConsoleAccess(trusted, header, hosts, authenticated, hostsName);
    }

    /**
     * Why a request is refused, or {@code null} if it may go on to the role check.
     *
     * @param method  the request's method
     * @param peer    the socket peer's address, as the container reports it
     * @param scheme  the scheme the container received, {@code http} or {@code https}
     * @param headers the values of a request header, none: empty
     */
    public String refusal(String method, String peer, String scheme, Function<String, List<String>> headers) {
        String[] front = front(peer, scheme, headers);
        if (hostChecked && !allowed(front[1])) {
            String host = front[1] == null ? "" : front[1];
            return "Host '" + (host.length() > QUOTED ? host.substring(0, QUOTED) + "..." : host) + "' is not served: "
                    + "the console answers a loopback host or one of '" + hostsName + "'";
        }
        if (Console.mutation(method)) {
            String site = first(headers.apply("Sec-Fetch-Site"));
            if (site != null && !site.equals("same-origin") && !site.equals("none")) {
                return "cross-site request refused";
            }
            String origin = first(headers.apply("Origin"));
            // A request without Origin is no browser's: browsers send it with every POST, PUT and DELETE.
            if (origin != null && !sameOrigin(origin, front[0], front[1])) {
                return "cross-site request refused";
            }
        }
        return null;
    }

    /**
     * The scheme and authority the client addressed: a trusted proxy's word, else the
     * container's scheme and the {@code Host} header.
     */
    private String[] front(String peer, String scheme, Function<String, List<String>> headers) {
        String proto = null;
        String host = null;
        byte[] peerAddress = IpLiteral.parse(peer);
        if (trusted.length > 0 && peerAddress != null && Cidr.anyContains(trusted, peerAddress)) {
            if (forwardedHeader == ForwardedHeader.FORWARDED) {
                List<String> values = headers.apply("Forwarded");
                List<String> fors = ForwardedHops.forwarded(values);
                List<String> protos = ForwardedHops.forwarded(values, "proto");
                List<String> hosts = ForwardedHops.forwarded(values, "host");
                // As for the client address: from the right, while the proxy that wrote an element is trusted;
                // the outermost trusted proxy's element names what the browser addressed.
                for (int i = fors.size() - 1; i >= 0; i--) {
                    proto = protos.get(i).isEmpty() ? proto : protos.get(i);
                    host = hosts.get(i).isEmpty() ? host : hosts.get(i);
                    byte[] hop = ForwardedHops.address(fors.get(i));
                    if (hop == null || !Cidr.anyContains(trusted, hop)) {
                        break;
                    }
                }
            } else {
                // Each proxy sets these (or appends to them): the last value is the nearest trusted proxy's.
                proto = last(headers.apply("X-Forwarded-Proto"));
                host = last(headers.apply("X-Forwarded-Host"));
            }
        }
        if (proto != null) {
            proto = proto.trim().toLowerCase(Locale.ROOT);
        }
        if (proto == null || (!proto.equals("http") && !proto.equals("https"))) {
            proto = scheme == null ? "http" : scheme.toLowerCase(Locale.ROOT);
        }
        if (host == null || host.isBlank()) {
            host = first(headers.apply("Host"));
        }
        return new String[] {proto, host == null ? null : host.trim()};
    }

    /** Whether an {@code Origin} is {@code scheme://authority}, default ports written or not. */
    static boolean sameOrigin(String origin, String scheme, String authority) {
        if (authority == null) {
            return false;
        }
        String self = origin(scheme + "://" + authority);
        return self != null && self.equals(origin(origin.trim()));
    }

    /** {@code scheme://host:port} in lower case with the port written, or {@code null} if malformed. */
    private static String origin(String text) {
        int colon = text.indexOf("://");
        if (colon < 0) {
            return null;
        }
        String scheme = text.substring(0, colon).toLowerCase(Locale.ROOT);
        String[] hostPort = hostPort(text.substring(colon + 3));
        if (hostPort == null || (!scheme.equals("http") && !scheme.equals("https"))) {
            return null;
        }
        String port = hostPort[1] != null ? hostPort[1] : scheme.equals("https") ? "443" : "80";
        return scheme + "://" + hostPort[0] + ":" + Integer.parseInt(port);
    }

    /** Whether a {@code Host} value is loopback or allowed. */
    private boolean allowed(String authority) {
        String[] hostPort = authority == null ? null : hostPort(authority);
        if (hostPort == null) {
            return false;
        }
        String host = hostPort[0];
        if (host.equals("localhost") || allowedHosts.contains(host)) {
            return true;
        }
        byte[] address = IpLiteral.parse(host.startsWith("[") ? host.substring(1, host.length() - 1) : host);
        return address != null && isLoopback(address);
    }

    /**
     * The host (lower case, without a final dot; an IPv6 literal in brackets) and the port, or
     * {@code null}, of {@code host[:port]}; {@code null} if malformed.
     */
    private static String[] hostPort(String authority) {
        String host = authority;
        String port = null;
        int close = authority.lastIndexOf(']');
        int colon = authority.lastIndexOf(':');
        if (colon > close && (authority.startsWith("[") || authority.indexOf(':') == colon)) {
            host = authority.substring(0, colon);
            port = authority.substring(colon + 1);
            if (!PORT.matcher(port).matches() || Integer.parseInt(port) > 65_535) {
                return null;
            }
        }
        String normal = normalHost(host);
        return normal == null ? null : new String[] {normal, port};
    }

    /** A host name or IP literal in one form (lower case, no final dot, IPv6 in brackets), or {@code null}. */
    private static String normalHost(String host) {
        if (host.startsWith("[") && host.endsWith("]")) {
            byte[] v6 = IpLiteral.parse(host.substring(1, host.length() - 1));
            return v6 == null ? null : v6.length == 16 ? "[" + IpLiteral.format(v6) + "]" : IpLiteral.format(v6);
        }
        byte[] address = IpLiteral.parse(host);
        if (address != null) {
            return address.length == 16 ? "[" + IpLiteral.format(address) + "]" : IpLiteral.format(address);
        }
        String name = host.toLowerCase(Locale.ROOT);
        name = name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
        return name.length() <= 253 && HOST_NAME.matcher(name).matches() ? name : null;
    }

    private static boolean isLoopback(byte[] address) {
        if (address.length == 4) {
            return (address[0] & 0xFF) == 127;
        }
        for (int i = 0; i < 15; i++) {
            if (address[i] != 0) {
                return false;
            }
        }
        return address[15] == 1;
    }

    private static String first(List<String> values) {
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    /** The last comma-separated item of the last value, or {@code null}. */
    private static String last(List<String> values) {
        if (values == null || values.isEmpty()) {
            return null;
        }
        String value = values.get(values.size() - 1);
        String item = value.substring(value.lastIndexOf(',') + 1).trim();
        return item.isEmpty() ? null : item;
    }
}
