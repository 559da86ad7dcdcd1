package dev.sluice.web;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** One request from {@code 192.0.2.1} with no headers, principal or parameters, and its own attributes. */
final class TestRequest implements RequestView {
    private final Map<String, Object> attributes = new HashMap<>();

    @Override
    public String header(String name) {
        return null;
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
