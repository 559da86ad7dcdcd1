package dev.sluice.grpc;

import dev.sluice.web.RequestView;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link RequestView} of one call: the request metadata as headers (ASCII keys only; a
 * {@code -bin} key is never read), the peer's address as the socket address, the principal from
 * the application's {@link Context.Key}, and attributes of the call's own. A gRPC call has no
 * query parameters and its HTTP method is always {@code POST}.
 */
final class CallView implements RequestView {

    /** The address of a peer without one (in-process, Unix domain socket): a local caller. */
    static final String LOCAL_PEER = "127.0.0.1";

    private final ServerCall<?, ?> call;
    private final Metadata headers;
    private final Object principal;
    private final Map<String, Object> attributes = new ConcurrentHashMap<>();

    CallView(ServerCall<?, ?> call, Metadata headers, Context.Key<?> principalKey) {
        this.call = call;
        this.headers = headers;
        this.principal = principalKey == null ? null : principalKey.get();
    }

    @Override
    public String header(String name) {
        Metadata.Key<String> key = key(name);
        return key == null ? null : headers.get(key);
    }

    @Override
    public List<String> headers(String name) {
        Metadata.Key<String> key = key(name);
        Iterable<String> all = key == null ? null : headers.getAll(key);
        List<String> out = new ArrayList<>();
        if (all != null) {
            all.forEach(out::add);
        }
        return out;
    }

    @Override
    public String principal() {
        if (principal instanceof Principal p) {
            return p.getName();
        }
        return principal == null ? null : principal.toString();
    }

    @Override
    public String param(String name) {
        return null;
    }

    @Override
    public String remoteAddr() {
        SocketAddress peer = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        if (peer instanceof InetSocketAddress inet && inet.getAddress() != null) {
            String literal = inet.getAddress().getHostAddress();
            int scope = literal.indexOf('%');
            return scope < 0 ? literal : literal.substring(0, scope);
        }
        return LOCAL_PEER;
    }

    @Override
    public Object attribute(String name) {
        return attributes.get(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
        if (value == null) {
            attributes.remove(name);
        } else {
            attributes.put(name, value);
        }
    }

    @Override
    public String method() {
        return "POST";
    }

    /** The ASCII metadata key of a header name, or {@code null} for a name metadata cannot read as text. */
    private static Metadata.Key<String> key(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        if (lower.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
            return null;
        }
        try {
            return Metadata.Key.of(lower, Metadata.ASCII_STRING_MARSHALLER);
        } catch (IllegalArgumentException e) {
            return null; // not a legal metadata key: no call carries it
        }
    }
}
