package dev.sluice.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;

/**
 * The application behind the filters. Every path answers 200 "ok", except the paths ending in
 * {@code /forward}, {@code /include}, {@code /fail} (500, shown by the error page) and
 * {@code /async}, which dispatch the request again to {@code /target}.
 */
public final class TestServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
        // An include keeps the including request's paths; the included one is always /target.
        String path = req.getDispatcherType() == DispatcherType.INCLUDE ? "/target"
                : req.getPathInfo() == null ? "" : req.getPathInfo();
        if (path.endsWith("/forward")) {
            req.getRequestDispatcher("/target").forward(req, resp);
        } else if (path.endsWith("/include")) {
            resp.setContentType("text/plain");
            resp.getWriter().write("including ");
            req.getRequestDispatcher("/target").include(req, resp);
        } else if (path.endsWith("/fail")) {
            resp.sendError(500);
        } else if (path.endsWith("/async")) {
            AsyncContext async = req.startAsync();
            async.dispatch("/target");
        } else {
            resp.setContentType("text/plain");
            resp.getWriter().write(path.endsWith("/target") ? "target" : "ok");
        }
    }
}
