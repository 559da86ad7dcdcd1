package dev.sluice.javax;

import javax.servlet.DispatcherType;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * The application of the {@code fit} web application: "ok", and as its error page, its own JSON
 * envelope written from what Sluice put on the request.
 */
public final class FitServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (req.getDispatcherType() == DispatcherType.ERROR) {
            resp.setContentType("application/json");
            resp.getWriter()
                    .write("{\"error\":\"slow down\",\"status\":" + req.getAttribute("javax.servlet.error.status_code")
                    + ",\"policy\":\"" + req.getAttribute("dev.sluice.policy") + "\"}");
            return;
        }
        resp.setContentType("text/plain");
        resp.getWriter().write("ok");
    }
}
