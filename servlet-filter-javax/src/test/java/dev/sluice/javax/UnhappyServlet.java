package dev.sluice.javax;

import dev.sluice.testing.Ends;

import javax.servlet.AsyncContext;
import javax.servlet.AsyncEvent;
import javax.servlet.AsyncListener;
import javax.servlet.DispatcherType;
import javax.servlet.Filter;
import javax.servlet.FilterChain;
import javax.servlet.ServletException;
import javax.servlet.ServletOutputStream;
import javax.servlet.ServletRequest;
import javax.servlet.ServletResponse;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;

/**
 * The application of the {@code unhappy} web.xml in Tomcat 9 (javax.servlet), as the jakarta
 * tests' application of the same name: every request ends in {@link Ends} under its
 * {@code X-Client} header after the filters have settled it ({@link EndsFilter} in front for a
 * synchronous request, an async listener registered after Sluice's for an asynchronous one).
 *
 * <ul>
 *   <li>{@code /page/<status>}: a page with that status written to the output stream in 8 KB
 *       pieces until a write fails (at most 64 MB): the status is committed first, and a client
 *       that hung up makes the next write throw;
 *   <li>{@code /async-page/<status>}: the same from another thread; after a failed write the
 *       thread returns without completing: Tomcat reports the failure to the async listeners
 *       ({@code onError}, the status already committed) and ends the request (timeout 5 s). (An
 *       exception escaping {@code AsyncContext.start} would race Tomcat 9 recycling the request:
 *       it sets 500 on the response object, which may already serve the next request.);
 *   <li>{@code /twice/<status>}: {@code startAsync()} and {@code dispatch()}; on the async dispatch
 *       {@code startAsync()} again, on the request that dispatch got, answered with that status;
 *   <li>anything else: 404.
 * </ul>
 */
public final class UnhappyServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final String CLIENT = "X-Client";
    private static final String ASYNC = UnhappyServlet.class.getName() + ".async";
    private static final byte[] PIECE = new byte[8 * 1024];
    private static final int MAX_PIECES = 8 * 1024;

    static {
        Arrays.fill(PIECE, (byte) 'x');
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String path = req.getPathInfo() == null ? "" : req.getPathInfo();
        String[] parts = path.split("/");
        String client = req.getHeader(CLIENT);
        if (path.startsWith("/page/")) {
            page(resp, Integer.parseInt(parts[2]));
        } else if (path.startsWith("/async-page/")) {
            AsyncContext async = start(req, client, 5_000);
            async.start(() -> {
                try {
                    page((HttpServletResponse) async.getResponse(), Integer.parseInt(parts[2]));
                    async.complete();
                } catch (IOException e) {
                    // Tomcat saw the write fail and ends the request itself, through the listeners' onError.
                }
            });
        } else if (path.startsWith("/twice/")) {
            if (req.getDispatcherType() == DispatcherType.REQUEST) {
                start(req, client, 30_000).dispatch();
            } else {
                // The first cycle's listeners are dropped here; they must register again (onStartAsync).
                AsyncContext async = req.startAsync();
                async.start(() -> {
                    try {
                        HttpServletResponse response = (HttpServletResponse) async.getResponse();
                        response.setStatus(Integer.parseInt(parts[2]));
                        response.getWriter().write("twice");
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    } finally {
                        async.complete();
                    }
                });
            }
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

    /** In front of every other filter: records the end of a synchronous request once they have returned or thrown. */
    public static final class EndsFilter implements Filter {
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
