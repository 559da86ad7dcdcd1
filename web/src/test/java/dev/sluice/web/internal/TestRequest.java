package dev.sluice.web.internal;

import dev.sluice.web.RequestView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One request from {@code 192.0.2.1} with no principal or parameters, its own attributes, and the
 * given method (default unknown) and headers (default none).
 */
public final class TestRequest implements RequestView {
    private final Map<String, Object> attributes = new HashMap<>();
    private final String method;
    private final Map<String, String> headers;

    /** A request of no known method, without headers. */
    public TestRequest() {
        this(null, Map.of());
    }

    /** A request of {@code method} with {@code headers}. */
    public TestRequest(String method, Map<String, String> headers) {
        this.method = method;
        this.headers = Map.copyOf(headers);
    }

    @Override
    public String header(String name) {
        return headers.get(name);
    }

    @Override
    public String method() {
        return method;
    }

    @Override
    public List<String> headers(String name) {
        return List.of();
    }

    @Override
    public String principal() {
        return null;
    }

    @Override
    public String param(String name) {
        return null;
    }

    @Override
    public String remoteAddr() {
        return "192.0.2.1";
    }

    @Override
    public Object attribute(String name) {
        return attributes.get(name);
    }

    @Override
    public void setAttribute(String name, Object value) {
        attributes.put(name, value);
    }
}
