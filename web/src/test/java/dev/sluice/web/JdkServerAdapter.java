package dev.sluice.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A whole adapter over the JDK's {@code com.sun.net.httpserver}, on the public seam alone: it asks
 * its {@link HttpLimiter} without blocking the server's thread, renders the {@link Answer}, and
 * reports the end of the response. The application sends the status and writes the body; the
 * adapter closes the exchange once the end is reported, so a client never sees a response whose
 * refund or lease is still pending.
 */
record JdkServerAdapter(HttpLimiter limiter, HttpHandler application) implements HttpHandler {

    @Override
    public void handle(HttpExchange exchange) {
        limiter.check(new View(exchange, new HashMap<>())).whenComplete((verdict, failure) -> {
            try (exchange) {
                if (failure != null) {
                    exchange.sendResponseHeaders(500, -1);
                    return;
                }
                Answer answer = verdict.answer();
                answer.headers().forEach(h -> exchange.getResponseHeaders().set(h.name(), h.value()));
                if (!verdict.proceeds()) {
                    byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().set("Content-Type", answer.contentType());
                    exchange.sendResponseHeaders(answer.status(), body.length);
                    exchange.getResponseBody().write(body);
                    return;
                }
                try {
                    application.handle(exchange);
                } finally { // the status sent decides, whatever failed after it; none sent counts as 500
                    verdict.responseEnded(exchange.getResponseCode() < 0 ? 500 : exchange.getResponseCode());
                }
            } catch (IOException e) {
                // the client went away: nothing left to send
            }
        });
    }

    /** The exchange as the seam reads it, with attributes of its own (an exchange's are its context's on JDK 17). */
    private record View(HttpExchange exchange, Map<String, Object> attributes) implements RequestView {
        @Override
        public String header(String name) {
            return exchange.getRequestHeaders().getFirst(name);
        }
        @Override
        public List<String> headers(String name) {
            List<String> values = exchange.getRequestHeaders().get(name);
            return values == null ? List.of() : values;
        }
        @Override
        public String principal() {
            return exchange.getPrincipal() == null ? null : exchange.getPrincipal().getUsername();
        }
        @Override
        public String param(String name) {
            String query = exchange.getRequestURI().getRawQuery();
            for (String pair : query == null ? new String[0] : query.split("&")) {
                String[] parts = pair.split("=", 2);
                if (URLDecoder.decode(parts[0], StandardCharsets.UTF_8).equals(name)) {
                    return parts.length < 2 ? "" : URLDecoder.decode(parts[1], StandardCharsets.UTF_8);
                }
            }
            return null;
        }
        @Override
        public String remoteAddr() {
            return exchange.getRemoteAddress().getAddress().getHostAddress();
        }
        @Override
        public Object attribute(String name) {
            return attributes.get(name);
        }
        @Override
        public void setAttribute(String name, Object value) {
            attributes.put(name, value);
        }
        @Override
        public String method() {
            return exchange.getRequestMethod();
        }
    }
}
