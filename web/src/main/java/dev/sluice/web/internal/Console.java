package dev.sluice.web.internal;

import dev.sluice.Limit;
import dev.sluice.internal.Durations;
import dev.sluice.web.PolicyRegistry;
import dev.sluice.web.PolicyView;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The operator's console, free of any HTTP API: the servlet and the JAX-RS resource hand it each
 * request that passed their access checks and write the {@link Answer} it returns. Paths are
 * relative to where the application mapped the console:
 *
 * <ul>
 *   <li>{@code GET /} the page; {@code GET /console.js}, {@code GET /console.css}, {@code GET /favicon.svg}
 *       its script, style and icon
 *       (no inline script or style, no external asset: a {@code default-src 'self'} policy passes);
 *   <li>{@code GET /policies} every policy as JSON ({@code ?raw=true}: the refused callers'
 *       identities too, not only their partition keys);
 *   <li>{@code POST /policies/NAME/reset} with {@code caller}: resets that caller (a tier's policy,
 *       {@code <policy>/<tier>}, is two segments: {@code /policies/api/gold/reset});
 *   <li>{@code PUT /policies/NAME/override} with {@code limit} and optional {@code burst}; {@code DELETE}
 *       the same path clears it.
 * </ul>
 *
 * <p>Parameters come from the query string or an {@code application/x-www-form-urlencoded} body.
 * Stateless and thread-safe.
 */
public final class Console {

    /** The headers every answer carries: nothing framed, cached, sniffed or loaded from elsewhere. */
    public static final Map<String, String> HEADERS = Map.of(
            "Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
            "X-Content-Type-Options", "nosniff",
            "Cache-Control", "no-store",
            "Referrer-Policy", "no-referrer");

    private static final String JSON = "application/json;charset=utf-8";
    private static final Map<String, String> ASSETS = Map.of(
            "/", "text/html;charset=utf-8",
            "/console.js", "text/javascript;charset=utf-8",
            "/console.css", "text/css;charset=utf-8",
            "/favicon.svg", "image/svg+xml");

    private Console() {
    }

    /** What to answer: status, content type and body. */
    public record Answer(int status, String contentType, byte[] body) {
    }

    /** Whether {@code method} changes something. */
    public static boolean mutation(String method) {
        return !method.equals("GET") && !method.equals("HEAD");
    }

    /**
     * Answers one authorised request.
     *
     * @param path      the path below the console's mapping, {@code /} for the page
     * @param query     the raw query string, or {@code null}
     * @param body      the raw form body, or {@code null}
     * @param principal who asks, for the log of a change
     */
    public static Answer handle(PolicyRegistry registry, String method, String path, String query, String body,
                                String principal) {
        String where = path == null || path.isEmpty() ? "/" : path;
        if (ASSETS.containsKey(where)) {
            return method.equals("GET") || method.equals("HEAD") ? asset(where) : error(405, "use GET");
        }
        Map<String, String> params;
        try {
            params = form(query);
            params.putAll(form(body));
        } catch (IllegalArgumentException e) {
            return error(400, "the parameters are not form-encoded");
        }
        if (where.equals("/policies")) {
            return method.equals("GET") || method.equals("HEAD")
                    ? json(200, policies(registry.policies(), "true".equals(params.get("raw"))))
                    : error(405, "use GET");
        }
        String[] parts = where.split("/", -1); // "", "policies", NAME, action; a tier's NAME is two segments
        if (parts.length < 4 || parts.length > 5 || !parts[1].equals("policies")) {
            return error(404, "no such resource");
        }
        // A tier's policy, <policy>/<tier>, is addressed as two segments: containers refuse an encoded slash.
        String policy = URLDecoder.decode(parts[2], StandardCharsets.UTF_8)
                + (parts.length == 5 ? Tier.SEPARATOR + URLDecoder.decode(parts[3], StandardCharsets.UTF_8) : "");
        String action = parts[parts.length - 1];
        Optional<PolicyView> known = registry.policy(policy);
        if (known.isEmpty()) {
            return error(404, "no policy '" + policy + "' in this application");
        }
        try {
            if (action.equals("reset") && method.equals("POST")) {
                String caller = params.get("caller");
                if (caller == null || caller.isBlank()) {
                    return error(400,
                            "'caller' is required: an address, a key, or a composite key's parts joined by +");
                }
                List<String> reset = registry.reset(policy, caller);
                return json(200, "{\"reset\":" + strings(reset) + "}");
            }
            if (action.equals("override") && method.equals("PUT")) {
                String limit = params.get("limit");
                if (limit == null || limit.isBlank()) {
                    return error(400, "'limit' is required, e.g. 100/1m");
                }
                registry.override(policy, limit, params.get("burst"), principal);
                return json(200, view(registry.policy(policy).orElseThrow(), false));
            }
            if (action.equals("override") && method.equals("DELETE")) {
                registry.clearOverride(policy, principal);
                return json(200, view(registry.policy(policy).orElseThrow(), false));
            }
        } catch (IllegalArgumentException e) {
            return error(400, e.getMessage());
        } catch (IllegalStateException e) {
            return error(503, e.getMessage());
        }
        return action.equals("reset") || action.equals("override") ? error(405, "method not allowed")
                : error(404, "no such resource");
    }

    /**
     * Where to send a request for the console's own path without its trailing slash (the page's
     * relative links need it): {@code ./NAME/}, relative to the request, {@code NAME} being the
     * last segment of the path the console is mapped at. Never built from the request target,
     * which the client chose: {@code //evil.example/..;/sluice} would become a redirect to
     * another site.
     *
     * @param mapped the decoded path the console is mapped at, such as {@code /ops/sluice}
     */
    public static String pageLocation(String mapped) {
        String segment = mapped == null ? "" : mapped.substring(mapped.lastIndexOf('/') + 1);
        StringBuilder out = new StringBuilder("./");
        for (byte b : segment.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || "-._~!$&'()*+,=:@".indexOf(c) >= 0) {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xF, 16)));
            }
        }
        return out.append(segment.isEmpty() ? "" : "/").toString();
    }

    /** An error as JSON, {@code {"error": "..."}}. */
    public static Answer error(int status, String message) {
        return json(status, "{\"error\":" + string(message) + "}");
    }

    private static Answer json(int status, String json) {
        return new Answer(status, JSON, json.getBytes(StandardCharsets.UTF_8));
    }

    private static Answer asset(String path) {
        String name = path.equals("/") ? "console.html" : path.substring(1);
        try (InputStream in = Console.class.getResourceAsStream("console/" + name)) {
            if (in == null) {
                return error(404, "no such resource");
            }
            return new Answer(200, ASSETS.get(path), in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String policies(List<PolicyView> views, boolean raw) {
        StringBuilder out = new StringBuilder(1024).append("{\"refreshSeconds\":")
                .append(PolicyRegistry.REFRESH_SECONDS)
                .append(",\"policies\":[");
        for (int i = 0; i < views.size(); i++) {
            out.append(i == 0 ? "" : ",").append(view(views.get(i), raw));
        }
        return out.append("]}").toString();
    }

    private static String view(PolicyView view, boolean raw) {
        StringBuilder out = new StringBuilder(512);
        out.append("{\"name\":").append(string(view.name()))
                .append(",\"routes\":").append(strings(view.routes()))
                .append(",\"configured\":").append(limit(view.configured()))
                .append(",\"effective\":").append(limit(view.effective()))
                .append(",\"override\":");
        if (view.override() == null) {
            out.append("null");
        } else {
            out.append("{\"limit\":").append(string(view.override().limit()))
                    .append(",\"burst\":").append(string(view.override().burst()))
                    .append(",\"by\":").append(string(view.override().by()))
                    .append(",\"at\":")
                    .append(string(view.override().at() == null ? null : view.override().at().toString()))
                    .append(",\"configuredWhenSet\":").append(configuredWhenSet(view.override().configuredWhenSet()))
                    .append(",\"configuredChanged\":").append(view.override().configuredChanged())
                    .append(",\"applied\":").append(view.override().applied())
                    .append(",\"notApplied\":").append(string(view.override().notApplied()))
                    .append('}');
        }
        out.append(",\"store\":").append(string(view.store()))
                .append(",\"failureMode\":").append(string(view.failureMode().configName()))
                .append(",\"circuit\":").append(string(view.circuitOpen() ? "open" : "closed"))
                .append(",\"key\":").append(string(view.key()))
                .append(",\"counts\":{");
        int n = 0;
        for (Map.Entry<String, Long> count : new LinkedHashMap<>(view.counts()).entrySet()) {
            out.append(n++ == 0 ? "" : ",").append(string(count.getKey())).append(':').append(count.getValue());
        }
        out.append("},\"allowedPerSecond\":").append(view.allowedPerSecond())
                .append(",\"refusedPerSecond\":").append(view.refusedPerSecond())
                .append(",\"topRefused\":[");
        for (int i = 0; i < view.topRefused().size(); i++) {
            PolicyView.Refused refused = view.topRefused().get(i);
            out.append(i == 0 ? "" : ",").append("{\"partition\":").append(string(refused.partition()));
            if (raw) {
                out.append(",\"identity\":").append(string(refused.identity()));
            }
            out.append(",\"count\":").append(refused.count()).append('}');
        }
        return out.append("]}").toString();
    }

    private static String limit(Limit limit) {
        return "{\"limit\":" + string(limit.count() + "/" + Durations.formatDuration(limit.period()))
                + ",\"burst\":" + limit.burst() + ",\"algorithm\":" + string(limit.algorithm().configName())
                + ",\"cost\":" + limit.cost() + "}";
    }

    private static String configuredWhenSet(PolicyView.ConfiguredLimit limit) {
        return limit == null ? "null" : "{\"limit\":" + string(limit.limit()) + ",\"burst\":" + limit.burst() + "}";
    }

    private static String strings(List<String> values) {
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < values.size(); i++) {
            out.append(i == 0 ? "" : ",").append(string(values.get(i)));
        }
        return out.append(']').toString();
    }

    /** A JSON string; {@code <}, {@code >} and {@code &} escaped too, so that no value can close a tag. */
    static String string(String value) {
        if (value == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029') {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    /** The fields of a form-encoded text; {@code null} or empty: none. */
    private static Map<String, String> form(String text) {
        Map<String, String> out = new LinkedHashMap<>();
        if (text == null || text.isEmpty()) {
            return out;
        }
        for (String pair : text.split("&")) {
            int eq = pair.indexOf('=');
            String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.putIfAbsent(name, value);
        }
        return out;
    }
}
