package dev.sluice.servlet;

import dev.sluice.testing.Ends;
import dev.sluice.testing.Gates;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;

/**
 * The application behind the tests of responses that end badly: a client that resets the
 * connection, errors, timeouts, and requests that start a second async cycle. Every request
 * ends in {@link Ends} under its {@code X-Client} header, after the filter has settled it
 * ({@link EndsFilter} in front of the filters for a synchronous request; an async listener
 * registered after the filter's for an asynchronous one).
 *
 * <ul>
 *   <li>{@code /page/<status>}: a page with that status, written to the output stream in 8 KB
 *       pieces until a write fails (at most 64 MB): larger than any response buffer, so the
 *       status is committed first, and a client that hung up makes the next write throw;
 *   <li>{@code /async-page/<status>}: the same from another thread, completed when the writing
 *       ends, failed or not (Jetty does not report a failed write to the async listeners; the
 *       javax tests' twin lets the exception escape, which Tomcat reports as {@code onError});
 *   <li>{@code /twice/<status>}: {@code startAsync()} and {@code dispatch()}; on the async dispatch
 *       {@code startAsync()} again, on the request that dispatch got, answered with that status
 *       from another thread;
 *   <li>{@code /twice-timeout}: as {@code /twice}, but the second cycle is never completed (timeout
 *       200 ms: the container answers 500);
 *   <li>{@code /twice-error}: the async dispatch throws (the container answers 500);
 *   <li>{@code /timeout-committed/<status>}: asynchronous, the status and a first piece flushed,
 *       then never completed (timeout 200 ms);
 *   <li>{@code /async-hold/<status>/<gate>}: asynchronous, answered with that status once the test
 *       opens the gate ({@link Gates}).
 * </ul>
 */
public final class UnhappyServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final String CLIENT = "X-Client";
    /** Set on a request that went asynchronous: its end is recorded by a listener, not {@link EndsFilter}. */
    private static final String ASYNC = UnhappyServlet.class.getName() + ".async";
    private static final byte[] PIECE = new byte[8 * 1024];
    private static final int MAX_PIECES = 8 * 1024;

    static {
        Arrays.fill(PIECE, (byte) 'x');
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException, ServletException {
        String path = req.getPathInfo() == null ? "" : req.getPathInfo();
        String[] parts = path.split("/");
        String client = req.getHeader(CLIENT);
        if (req.getDispatcherType() == DispatcherType.ERROR) {
            resp.getWriter().write("error page"); // keeps the status of the error
        } else if (path.startsWith("/page/")) {
            page(resp, Integer.parseInt(parts[2]));
        } else if (path.startsWith("/async-page/")) {
            AsyncContext async = start(req, client, 30_000);
            async.start(() -> {
                try {
                    page((HttpServletResponse) async.getResponse(), Integer.parseInt(parts[2]));
                } catch (IOException e) {
                    throw new UncheckedIOException("the client is gone", e);
                } finally {
                    async.complete();
                }
            });
        } else if (path.startsWith("/twice")) {
            if (req.getDispatcherType() == DispatcherType.REQUEST) {
                start(req, client, 30_000).dispatch();
            } else if (path.equals("/twice-error")) {
                throw new ServletException("the async dispatch failed");
            } else if (path.equals("/twice-timeout")) {
                req.startAsync().setTimeout(200);
            } else {
                // The first cycle's listeners are dropped here; they must register again (onStartAsync).
                AsyncContext async = req.startAsync();
                async.start(() -> finish(async, Integer.parseInt(parts[2])));
            }
        } else if (path.startsWith("/timeout-committed/")) {
            start(req, client, 200);
            resp.setStatus(Integer.parseInt(parts[2]));
            resp.getOutputStream().write(PIECE);
            resp.flushBuffer();
        } else if (path.startsWith("/async-hold/")) {
            AsyncContext async = start(req, client, 30_000);
            async.start(() -> {
                Gates.pass(parts[3]);
                finish(async, Integer.parseInt(parts[2]));
            });
        } else {
            resp.setStatus(404);
        }
    }

    /**
     * Starts an async cycle on {@code req} whose end {@link Ends} records, with a listener that
     * follows the request into its later cycles, as the Servlet specification asks, after Sluice's.
     */
    private static AsyncContext start(HttpServletRequest req, String client, long timeout) {
        req.setAttribute(ASYNC, Boolean.TRUE);
        AsyncContext async = req.startAsync();
        async.setTimeout(timeout);
        async.addListener(new AsyncListener() {
            @Override
            public void onComplete(AsyncEvent event) {
                Ends.record(client);
            }

            @Override
            public void onTimeout(AsyncEvent event) {
            }

            @Override
            public void onError(AsyncEvent event) {
            }

            @Override
            public void onStartAsync(AsyncEvent event) {
                event.getAsyncContext().addListener(this);
            }
        });
        return async;
    }

    private static void page(HttpServletResponse resp, int status) throws IOException {
        resp.setStatus(status);
        resp.setContentType("text/html");
        ServletOutputStream out = resp.getOutputStream();
        for (int i = 0; i < MAX_PIECES; i++) {
            out.write(PIECE);
        }
    }

    private static void finish(AsyncContext async, int status) {
        try {
            HttpServletResponse resp = (HttpServletResponse) async.getResponse();
            resp.setStatus(status);
            resp.setContentType("text/plain");
            resp.getWriter().write("async " + status);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            async.complete();
        }
    }

    /**
     * Mapped in front of every other filter: records the end of a synchronous request in
     * {@link Ends} once the filters behind it have returned (or thrown).
     */
    static final class EndsFilter implements Filter {
        @Override
        public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
                throws IOException, ServletException {
            try {
                chain.doFilter(request, response);
            } finally {
                if (request.getAttribute(ASYNC) == null) {
                    Ends.record(((HttpServletRequest) request).getHeader(CLIENT));
                }
            }
        }
    }
}
