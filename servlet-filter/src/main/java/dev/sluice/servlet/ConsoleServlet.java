package dev.sluice.servlet;

import dev.sluice.web.RequestAttributes;
import dev.sluice.web.internal.Console;
import dev.sluice.web.internal.ConsoleAccess;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The operator's console of the application's rate limits: a page and a JSON API to see every
 * policy ({@link dev.sluice.web.PolicyRegistry}), reset a caller and set or clear a limit
 * override. Off unless the application maps it, on a path of its own that no rate-limit filter
 * covers:
 *
 * <pre>{@code
 * <servlet>
 *   <servlet-name>sluice-console</servlet-name>
 *   <servlet-class>dev.sluice.servlet.ConsoleServlet</servlet-class>
 *   <init-param><param-name>role</param-name><param-value>sluice-admin</param-value></init-param>
 * </servlet>
 * <servlet-mapping>
 *   <servlet-name>sluice-console</servlet-name>
 *   <url-pattern>/sluice/*</url-pattern>
 * </servlet-mapping>
 * }</pre>
 *
 * <p>Every request needs an authenticated user in the role of init-param {@code role} (default
 * {@code sluice-admin}): without a user the container is asked to authenticate
 * ({@code HttpServletRequest.authenticate}, e.g. a BASIC challenge), and a user without the role
 * is refused {@code 403}. Only init-param {@code authentication=none} lifts this, for a console
 * the application protects otherwise; it is logged at start-up, and then only a request whose
 * {@code Host} is a loopback name or address, or one of init-param {@code allowed-hosts}
 * (comma-separated host names or addresses), is served; others are refused {@code 403}, so that
 * no page on the internal network can reach the console under a name rebound to its address. A
 * request that changes something ({@code POST}, {@code PUT}, {@code DELETE}) from another site
 * ({@code Sec-Fetch-Site}, or an {@code Origin} that is not the console's) is refused {@code 403}.
 * Behind a proxy, the console's own origin and {@code Host} are what a peer in
 * {@code trusted-proxies} says in its {@code forwarded-header} (with {@code X-Forwarded-For}:
 * {@code X-Forwarded-Proto} and {@code X-Forwarded-Host}; with {@code Forwarded}: its
 * {@code proto=} and {@code host=}): init-params of the servlet, or the filters' context-params
 * {@code sluice.trusted-proxies} and {@code sluice.forwarded-header}. A bad value fails
 * {@code init}. A request that a Sluice rate-limit filter decided is refused {@code 500}: the
 * console must stay reachable during the flood it helps to stop, so no filter may cover its path.
 */
public final class ConsoleServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ConsoleServlet.class);

    /** The role required by default. */
    public static final String DEFAULT_ROLE = "sluice-admin";

    private String role;
    private boolean open;
    private ConsoleAccess access;
    private final AtomicBoolean warnedFiltered = new AtomicBoolean();

    @Override
    public void init(ServletConfig config) throws ServletException {
        super.init(config);
        String where = "servlet '" + config.getServletName() + "'";
        String roleParam = config.getInitParameter("role");
        role = roleParam == null || roleParam.isBlank() ? DEFAULT_ROLE : roleParam.trim();
        String authentication = config.getInitParameter("authentication");
        if (authentication != null && !authentication.isBlank()) {
            String normal = authentication.trim().toLowerCase(Locale.ROOT);
            if (!normal.equals("none") && !normal.equals("required")) {
                throw new ServletException(where + ": init-param 'authentication' must be required or none, got '"
                        + authentication + "'");
            }
            open = normal.equals("none");
        }
        try {
            access = ConsoleAccess.parse(name -> {
                String value = config.getInitParameter(name);
                // The filters' application-wide defaults: one list of trusted proxies for the application.
                return value != null || name.equals(ConsoleAccess.ALLOWED_HOSTS) || config.getServletContext() == null
                        ? value : config.getServletContext().getInitParameter("sluice." + name);
            }, !open, ConsoleAccess.ALLOWED_HOSTS);
        } catch (IllegalArgumentException e) {
            throw new ServletException(where + ": " + e.getMessage(), e);
        }
        for (String name : Collections.list(config.getInitParameterNames())) {
            if (!name.equals("role") && !name.equals("authentication") && !name.equals(ConsoleAccess.ALLOWED_HOSTS)
                    && !name.equals("trusted-proxies") && !name.equals("forwarded-header")) {
                throw new ServletException(where + ": init-param '" + name + "' is not one of the console's (role, "
                        + "authentication, allowed-hosts, trusted-proxies, forwarded-header), got '"
                        + config.getInitParameter(name) + "'");
            }
        }
        if (open) {
            LOG.warn("Sluice console {}: authentication=none, so anyone who reaches it can reset callers and change "
                    + "limits; protect its path otherwise", where);
        } else {
            LOG.info("Sluice console {}: users in role '{}'", where, role);
        }
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
            throws IOException, ServletException {
        Console.HEADERS.forEach(response::setHeader);
        String method = request.getMethod();
        if (request.getAttribute(RequestAttributes.OUTCOME) != null) {
            if (warnedFiltered.compareAndSet(false, true)) {
                LOG.error("Sluice console '{}' is covered by a rate-limit filter; map the filters so that they do not "
                        + "cover its path", getServletName());
            }
            write(request, response,
                    Console.error(500, "the console is behind a rate-limit filter; map the filters so that they "
                    + "do not cover its path"));
            return;
        }
        String refused = access.refusal(method, request.getRemoteAddr(), request.getScheme(),
                name -> Collections.list(request.getHeaders(name)));
        if (refused != null) {
            write(request, response, Console.error(403, refused));
            return;
        }
        if (!open) {
            if (request.getUserPrincipal() == null) {
                boolean authenticated;
                try {
                    authenticated = request.authenticate(response);
                } catch (ServletException e) {
                    authenticated = false; // no login configured: nobody is authenticated
                }
                if (!authenticated || request.getUserPrincipal() == null) {
                    if (!response.isCommitted() && response.getStatus() != 401) {
                        write(request, response, Console.error(401, "authentication required"));
                    }
                    return;
                }
            }
            if (!request.isUserInRole(role)) {
                write(request, response, Console.error(403, "role '" + role + "' required"));
                return;
            }
        }
        String path = request.getPathInfo();
        if (path == null) {
            // The page's relative links need the trailing slash. Relative, and set as a header: a container's
            // sendRedirect may make it absolute from the request target, which the client wrote.
            response.setStatus(HttpServletResponse.SC_FOUND);
            response.setHeader("Location", Console.pageLocation(request.getServletPath().isEmpty()
                    ? request.getContextPath() : request.getServletPath()));
            response.setContentLength(0);
            return;
        }
        String body = Console.mutation(method)
                ? new String(request.getInputStream().readNBytes(16_384), StandardCharsets.UTF_8) : null;
        String principal = request.getUserPrincipal() == null ? null : request.getUserPrincipal().getName();
        write(request, response, Console.handle(Registries.of(getServletContext()), method, path,
                request.getQueryString(), body, principal));
    }

    /**
     * Writes {@code answer}, with {@code Connection: close} when the request's body was left
     * unread (a refusal answers before reading it; a change reads at most 16 KiB): the container
     * then drops the connection after the answer, and a client told nothing would send its next
     * request on it and fail (the JDK client's, when the body came after a refusal on a busy machine).
     */
    private static void write(HttpServletRequest request, HttpServletResponse response, Console.Answer answer)
            throws IOException {
        boolean body = request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
        if (body && !request.getInputStream().isFinished()) {
            response.setHeader("Connection", "close");
        }
        response.setStatus(answer.status());
        response.setContentType(answer.contentType());
        response.setContentLength(answer.body().length);
        response.getOutputStream().write(answer.body());
    }
}
