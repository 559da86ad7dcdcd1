package dev.sluice.examples;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;

/**
 * A plain servlet that knows nothing about rate limiting: {@code RateLimitFilter}, mapped in
 * {@code web.xml}, decides before it runs. Answers {@code GET /hello} with one line of text.
 * Stateless, so thread-safe.
 */
public class HelloServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain;charset=UTF-8");
        response.getWriter().println("Hello from a plain servlet behind RateLimitFilter (5 per 10 s per API key).");
    }
}
