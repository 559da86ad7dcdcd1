package dev.sluice.javax;

import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.ServletException;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServletRequest;
import java.io.IOException;

/**
 * The application's login as far as the limiter cares: {@code X-API-Key} becomes the request attribute {@code tenant}.
 */
public final class TenantLogin implements Filter {
    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        String tenant = ((HttpServletRequest) request).getHeader("X-API-Key");
        if (tenant != null) {
            request.setAttribute("tenant", tenant);
        }
        chain.doFilter(request, response);
    }
}
