package dev.sluice.servlet;

import dev.sluice.testing.Gates;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;

/**
 * The application behind {@code charge=after} and {@code algorithm=concurrency} filters:
 * <ul>
 *   <li>{@code /login/right} 200, {@code /login/wrong} 401;
 *   <li>{@code /throw}: an exception (the container answers 500);
 *   <li>{@code /async/<status>}: asynchronous, answered with that status from another thread;
 *   <li>{@code /async-timeout}: asynchronous, never completed: the container times it out (500);
 *   <li>{@code /hold/<gate>}, {@code /async-hold/<gate>}: 200 once the test opens the gate
 *       ({@link Gates}), synchronously or from another thread;
 *   <li>anything else: 200 "ok".
 * </ul>
 */
public final class AfterResponseServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String path = req.getPathInfo() == null ? "" : req.getPathInfo();
        if (req.getDispatcherType() == DispatcherType.ERROR) {
            resp.getWriter().write("error page"); // keeps the status of the error
        } else if (path.equals("/login/wrong")) {
            answer(resp, 401, "wrong");
        } else if (path.equals("/throw")) {
            throw new IllegalStateException("the application failed");
        } else if (path.startsWith("/async/")) {
            int status = Integer.parseInt(path.substring("/async/".length()));
            AsyncContext async = req.startAsync();
            async.start(() -> finish(async, status));
        } else if (path.equals("/async-timeout")) {
            req.startAsync().setTimeout(200);
        } else if (path.startsWith("/hold/")) {
            Gates.pass(path.substring("/hold/".length()));
            answer(resp, 200, "held");
        } else if (path.startsWith("/async-hold/")) {
            AsyncContext async = req.startAsync();
            async.setTimeout(30_000);
            async.start(() -> {
                Gates.pass(path.substring("/async-hold/".length()));
                finish(async, 200);
            });
        } else {
            answer(resp, 200, "ok");
        }
    }

    private static void finish(AsyncContext async, int status) {
        try {
            answer((HttpServletResponse) async.getResponse(), status, "async " + status);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } finally {
            async.complete();
        }
    }

    private static void answer(HttpServletResponse resp, int status, String body) throws IOException {
        resp.setStatus(status);
        resp.setContentType("text/plain");
        resp.getWriter().write(body);
    }
}
