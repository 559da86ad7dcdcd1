package dev.sluice.internal;

import dev.sluice.SluiceConfig.KeySource;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Resolves the caller identity of a request from the configured key sources, tried in order;
 * the first present wins, and {@code ip} is always present.
 *
 * <p>The client address is the socket peer, unless the peer is a trusted proxy: then
 * {@code X-Forwarded-For} (or, without it, {@code Forwarded: for=}) is walked from the right and
 * the first address that is not a trusted proxy is the client, as Tomcat's {@code RemoteIpValve}
 * does. A forwarding header from an untrusted peer is ignored, so a client cannot pick its own
 * identity by sending one. Identities are prefixed by their kind ({@code ip~}, {@code user~},
 * {@code key~}) so that an API key cannot pose as an address. The stores hash any identity that is
 * long or unusual, so a hostile value never becomes a raw storage key.
 *
 * <p>Immutable and thread-safe; built once at start-up. Not API.
 */
public final class CallerResolver {

    private final KeySource[] sources;
    private final Cidr[] trusted;

    public CallerResolver(List<KeySource> sources, List<String> trustedProxies) {
        this.sources = sources.toArray(new KeySource[0]);
        this.trusted = trustedProxies.stream().map(Cidr::parse).toArray(Cidr[]::new);
    }

    /** The caller identity of a request. */
    public String resolve(RequestView request) {
        for (KeySource source : sources) {
            String value = switch (source.kind()) {
                case HEADER -> prefixed("key~", request.header(source.name()));
                case PARAM -> prefixed("key~", request.param(source.name()));
                case PRINCIPAL -> prefixed("user~", request.principal());
                case IP -> "ip~" + clientAddress(request);
            };
            if (value != null) {
                return value;
            }
        }
        return "ip~" + clientAddress(request);
    }

    private static String prefixed(String prefix, String value) {
        return value == null || value.isBlank() ? null : prefix + value.trim();
    }

    /** The client's address: the socket peer, or the first untrusted hop behind trusted proxies. */
    public String clientAddress(RequestView request) {
        String peer = request.remoteAddr();
        if (trusted.length == 0 || !isTrusted(peer)) {
            return peer;
        }
        List<String> hops = forwardedFor(request);
        for (int i = hops.size() - 1; i >= 0; i--) {
            String hop = hops.get(i);
            byte[] address = Cidr.address(hop);
            if (address == null) {
                return peer; // garbage in the chain: believe only what we saw on the socket
            }
            if (!isTrusted(address)) {
                return hop;
            }
        }
        return peer; // every hop is a trusted proxy
    }

    private boolean isTrusted(String address) {
        return isTrusted(Cidr.address(address));
    }

    private boolean isTrusted(byte[] address) {
        for (Cidr cidr : trusted) {
            if (cidr.contains(address)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> forwardedFor(RequestView request) {
        List<String> hops = new ArrayList<>();
        for (String value : request.headers("X-Forwarded-For")) {
            for (String hop : value.split(",")) {
                if (!hop.isBlank()) {
                    hops.add(hop.trim());
                }
            }
        }
        if (!hops.isEmpty()) {
            return hops;
        }
        for (String value : request.headers("Forwarded")) {
            for (String element : value.split(",")) {
                for (String pair : element.split(";")) {
                    String p = pair.trim();
                    if (p.toLowerCase(Locale.ROOT).startsWith("for=")) {
                        hops.add(forwardedNode(p.substring(4).trim()));
                    }
                }
            }
        }
        return hops;
    }

    /** {@code "[2001:db8::1]:4711"} to {@code 2001:db8::1}; {@code 192.0.2.1:80} to {@code 192.0.2.1}. */
    private static String forwardedNode(String node) {
        String n = node.startsWith("\"") && node.endsWith("\"") && node.length() > 1 ? node.substring(1, node.length() - 1) : node;
        if (n.startsWith("[")) {
            int close = n.indexOf(']');
            return close > 0 ? n.substring(1, close) : n;
        }
        int colon = n.indexOf(':');
        return colon > 0 && n.indexOf(':', colon + 1) < 0 ? n.substring(0, colon) : n;
    }
}
