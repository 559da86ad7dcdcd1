package dev.sluice.spring.boot;

import dev.sluice.web.PolicyRegistry;
import dev.sluice.web.internal.Console;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.WebEndpoint;
import org.springframework.boot.json.JsonParserFactory;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.List;
import java.util.Map;

/**
 * The Actuator endpoint {@code sluice}, over the application's {@link PolicyRegistry}: the one the
 * starter's filters and {@code @RateLimit} handlers register in. Its answers are the console's
 * JSON, made by the console's code ({@link Console}), with the console's messages and statuses:
 *
 * <ul>
 *   <li>{@code GET /actuator/sluice}: every policy; {@code GET /actuator/sluice/<policy>}: one;
 *   <li>{@code POST /actuator/sluice/<policy>} with {@code {"limit": "200/1m", "burst": "200"}}
 *       ({@code burst} optional): overrides its limit; with {@code {"caller": "192.0.2.1"}}: resets
 *       a caller, given as the client sends it;
 *   <li>{@code DELETE /actuator/sluice/<policy>}: clears the override.
 * </ul>
 *
 * A bad value is {@code 400 {"error": "..."}} and changes nothing, an unknown policy {@code 404},
 * a failing store {@code 503}. Changes are logged by the registry with the principal Actuator
 * passes. Web only: its answers carry HTTP statuses.
 */
@WebEndpoint(id = "sluice")
final class SluiceEndpoint {

    private final PolicyRegistry policies;

    SluiceEndpoint(PolicyRegistry policies) {
        this.policies = policies;
    }

    /** Every policy, as the console's {@code GET policies} lists them. */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> policies(SecurityContext security) {
        return console("GET", "/policies", null, security);
    }

    /** One policy; a tier's name, {@code <policy>/<tier>}, is two path segments. */
    @ReadOperation
    public WebEndpointResponse<Map<String,
            Object>> policy(@Selector(match = Selector.Match.ALL_REMAINING) String[] policy,
                                                           SecurityContext security) {
        String name = String.join("/", policy);
        WebEndpointResponse<Map<String, Object>> all = policies(security);
        if (all.getStatus() == WebEndpointResponse.STATUS_OK && all.getBody()
                .get("policies") instanceof List<?> views) {
            for (Object view : views) {
                if (view instanceof Map<?, ?> map && name.equals(map.get("name"))) {
                    @SuppressWarnings("unchecked") // a JSON object read as a map of its members
                    Map<String, Object> members = (Map<String, Object>) map;
                    return new WebEndpointResponse<>(members);
                }
            }
        }
        return answer(Console.error(404, "no policy '" + name + "' in this application"));
    }

    /** Overrides the policy's limit ({@code limit}, optional {@code burst}) or resets a caller ({@code caller}). */
    @WriteOperation
    public WebEndpointResponse<Map<String,
            Object>> change(@Selector(match = Selector.Match.ALL_REMAINING) String[] policy,
                                                           @Nullable String limit, @Nullable String burst,
                                                           @Nullable String caller, SecurityContext security) {
        String path = "/policies/" + encode(String.join("/", policy));
        if (caller != null && limit == null && burst == null) {
            return console("POST", path + "/reset", "caller=" + encode(caller), security);
        }
        if (caller == null && limit != null) {
            return console("PUT", path + "/override", "limit=" + encode(limit)
                    + (burst == null ? "" : "&burst=" + encode(burst)), security);
        }
        return answer(Console.error(400, "give 'limit' (and optionally 'burst') to override the limit, "
                + "or 'caller' to reset a caller"));
    }

    /** Clears the policy's override: its configured limit decides again. */
    @DeleteOperation
    public WebEndpointResponse<Map<String,
            Object>> clear(@Selector(match = Selector.Match.ALL_REMAINING) String[] policy,
                                                          SecurityContext security) {
        return console("DELETE", "/policies/" + encode(String.join("/", policy)) + "/override", null, security);
    }

    private WebEndpointResponse<Map<String, Object>> console(String method, String path, String form,
                                                             SecurityContext security) {
        Principal principal = security.getPrincipal();
        return answer(Console.handle(policies, method, path, null, form,
                principal == null ? null : principal.getName()));
    }

    /** The console's answer, its JSON read back into maps and lists for Actuator to write. */
    private static WebEndpointResponse<Map<String, Object>> answer(Console.Answer answer) {
        Map<String, Object> body = JsonParserFactory.getJsonParser()
                .parseMap(new String(answer.body(), StandardCharsets.UTF_8));
        return new WebEndpointResponse<>(body, answer.status());
    }

    /** As the console reads path segments and form fields. */
    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
