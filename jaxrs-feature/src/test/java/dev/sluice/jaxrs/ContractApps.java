package dev.sluice.jaxrs;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.ws.rs.core.Application;

import java.io.IOException;
import java.security.Principal;
import java.util.Map;
import java.util.Set;

/**
 * The applications of the runtime contract ({@link JaxRsContract}), written the portable way: an
 * {@link Application} subclass, named to the runtime's servlet by its class name as in
 * {@code web.xml}, returning its classes (the feature among them) and its {@code sluice.*}
 * properties. The runtime creates the instance, so what it needs from the test is set here first.
 */
final class ContractApps {

    private static volatile String store;
    private static volatile String deadStore;

    private ContractApps() {
    }

    /** Sets the store of {@link Limited} and the unreachable one of {@link StoreDown}; before the runtime starts. */
    static void configure(String storeUrl, String deadStoreUrl) {
        store = storeUrl;
        deadStore = deadStoreUrl;
    }

    /** Limits on a live Redis; a trusted proxy on loopback, where the tests call from. */
    public static class Limited extends Application {
        @Override
        public Set<Class<?>> getClasses() {
            return Set.of(Resources.MethodLimited.class, Resources.ClassLimited.class, Resources.IpLimited.class,
                    Resources.LoginPage.class,
                    RateLimitFeature.class);
        }

        @Override
        public Map<String, Object> getProperties() {
            return Map.of("sluice.store", store, "sluice.timeout", "2s", "sluice.trusted-proxies", "127.0.0.1");
        }
    }

    /**
     * The application's own identity and format: {@code attribute:tenant} keys, and refusals thrown
     * ({@code sluice.reject=exception}) for its {@code ExceptionMapper}.
     */
    public static class Fit extends Application {
        @Override
        public Set<Class<?>> getClasses() {
            return Set.of(Resources.Fit.class, Resources.TooManyRequests.class, RateLimitFeature.class);
        }

        @Override
        public Map<String, Object> getProperties() {
            return Map.of("sluice.store", store, "sluice.timeout", "2s", "sluice.reject", "exception");
        }
    }

    /** The failure modes on a Redis URL where nothing listens. */
    public static class StoreDown extends Application {
        @Override
        public Set<Class<?>> getClasses() {
            return Set.of(Resources.FailureModes.class, RateLimitFeature.class);
        }

        @Override
        public Map<String, Object> getProperties() {
            return Map.of("sluice.store", deadStore, "sluice.timeout", "200ms");
        }
    }

    /**
     * The application's login as far as the limiter cares: {@code X-Tenant} becomes the request attribute
     * {@code tenant}.
     */
    public static class TenantLogin implements Filter {
        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            String tenant = ((HttpServletRequest) request).getHeader("X-Tenant");
            if (tenant != null) {
                request.setAttribute("tenant", tenant);
            }
            chain.doFilter(request, response);
        }
    }

    /**
     * Authenticates {@code X-User} as the servlet request's user principal, as a servlet
     * container's login would; each runtime's {@code SecurityContext} reports it.
     */
    public static class HeaderLogin implements Filter {
        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            HttpServletRequest http = (HttpServletRequest) request;
            String user = http.getHeader("X-User");
            if (user == null) {
                chain.doFilter(request, response);
                return;
            }
            Principal principal = () -> user;
            chain.doFilter(new HttpServletRequestWrapper(http) {
                @Override
                public Principal getUserPrincipal() {
                    return principal;
                }

                @Override
                public String getRemoteUser() {
                    return user;
                }

                @Override
                public String getAuthType() {
                    return "X-User";
                }
            }, response);
        }
    }
}
