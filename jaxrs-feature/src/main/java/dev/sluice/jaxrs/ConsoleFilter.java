package dev.sluice.jaxrs;

import dev.sluice.web.PolicyRegistry;
import dev.sluice.web.RequestAttributes;
import dev.sluice.web.internal.Console;
import dev.sluice.web.internal.ConsoleAccess;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Serves {@link ConsoleResource}'s requests: the access checks, then the shared {@link Console};
 * bound by {@link RateLimitFeature} to the console's methods, so that it serves that feature's
 * registry. Aborts every request with the console's answer.
 */
final class ConsoleFilter implements ContainerRequestFilter {

    private static final Logger LOG = LoggerFactory.getLogger(ConsoleFilter.class);
    private static final int MAX_BODY = 16_384;

    private final PolicyRegistry registry;
    /** The role required, or {@code null}: {@code authentication=none}. */
    private final String role;
    private final ConsoleAccess access;
    private final AtomicBoolean warnedFiltered;

    ConsoleFilter(PolicyRegistry registry, String role, ConsoleAccess access, AtomicBoolean warnedFiltered) {
        this.registry = registry;
        this.role = role;
        this.access = access;
        this.warnedFiltered = warnedFiltered;
    }

    @Override
    public void filter(ContainerRequestContext request) throws IOException {
        Console.Answer answer = answer(request);
        if (answer == null) {
            // Absolute, from the application's base and the console's matched path: never from the request
            // target, which the client wrote (//evil.example/..;/sluice would lead to another site).
            UriInfo uri = request.getUriInfo();
            List<String> matched = uri.getMatchedURIs(true);
            String mapped = matched.isEmpty() ? "" : strip(matched.get(matched.size() - 1));
            Response.ResponseBuilder redirect = Response.status(302)
                    .location(uri.getBaseUri().resolve("./" + mapped + "/"));
            Console.HEADERS.forEach(redirect::header);
            request.abortWith(redirect.build());
            return;
        }
        request.abortWith(response(answer));
    }

    private Console.Answer answer(ContainerRequestContext request) throws IOException {
        String method = request.getMethod();
        if (request.getProperty(RequestAttributes.OUTCOME) != null) {
            if (warnedFiltered.compareAndSet(false, true)) {
                LOG.error("Sluice console is covered by a rate limit; map the servlet filters so that they do not "
                        + "cover its path");
            }
            return Console.error(500, "the console is behind a rate limit; map the filters so that they do not cover "
                    + "its path");
        }
        Object peer = request.getProperty(LimitFilter.REMOTE_ADDR);
        String refused = access.refusal(method, peer instanceof String address ? address : null,
                request.getUriInfo().getRequestUri().getScheme(), name -> {
                    List<String> values = request.getHeaders().get(name);
                    return values == null ? List.of() : values;
                });
        if (refused != null) {
            return Console.error(403, refused);
        }
        SecurityContext security = request.getSecurityContext();
        String principal = security == null || security.getUserPrincipal() == null ? null
                : security.getUserPrincipal().getName();
        if (role != null) {
            if (principal == null) {
                return Console.error(401, "authentication required");
            }
            if (!security.isUserInRole(role)) {
                return Console.error(403, "role '" + role + "' required");
            }
        }
        UriInfo uri = request.getUriInfo();
        URI requested = uri.getRequestUri();
        String path = below(uri);
        if (path.isEmpty()) {
            return null; // the page's relative links need the trailing slash
        }
        String body = null;
        if (Console.mutation(method) && request.hasEntity()) {
            try (InputStream in = request.getEntityStream()) {
                body = new String(in.readNBytes(MAX_BODY), StandardCharsets.UTF_8);
            }
        }
        return Console.handle(registry, method, path, requested.getRawQuery(), body, principal);
    }

    /** The path below the console's mapping, still encoded: {@code ""}, {@code "/"}, {@code "/policies"}... */
    private static String below(UriInfo uri) {
        String path = strip(uri.getPath(false));
        List<String> matched = uri.getMatchedURIs(false);
        String root = matched.isEmpty() ? "" : strip(matched.get(matched.size() - 1));
        return path.startsWith(root) ? path.substring(root.length()) : path;
    }

    private static String strip(String path) {
        return path.startsWith("/") ? path.substring(1) : path;
    }

    /** The answer as a response, with the headers every console answer carries. */
    static Response response(Console.Answer answer) {
        Response.ResponseBuilder out = Response.status(answer.status()).type(answer.contentType())
                .entity(answer.body());
        Console.HEADERS.forEach(out::header);
        return out.build();
    }
}
