package dev.sluice.javax;

import javax.servlet.AsyncContext;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The application behind the {@code after} web.xml in Tomcat 9 (javax.servlet): {@code /login/right}
 * 200 and {@code /login/wrong} 401, {@code /login/async-wrong} 401 from another thread;
 * {@code /reports/hold} answers 200 asynchronously once {@link #release()} is called;
 * anything else 200.
 */
public final class AfterResponseServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    static volatile CountDownLatch entered = new CountDownLatch(1);
    static volatile CountDownLatch released = new CountDownLatch(1);

    /** Lets the held report answer; the next one waits again. */
    static void release() {
        CountDownLatch open = released;
        entered = new CountDownLatch(1);
        released = new CountDownLatch(1);
        open.countDown();
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String path = req.getPathInfo() == null ? "" : req.getPathInfo();
        if (path.equals("/login/async-wrong") || path.equals("/reports/hold")) {
            CountDownLatch enteredNow = entered;
            CountDownLatch releasedNow = released;
            AsyncContext async = req.startAsync();
            async.start(() -> {
                int status = 401;
                if (path.equals("/reports/hold")) {
                    enteredNow.countDown();
                    status = await(releasedNow) ? 200 : 500;
                }
                try {
                    answer((HttpServletResponse) async.getResponse(), status);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                } finally {
                    async.complete();
                }
            });
        } else {
            answer(resp, path.equals("/login/wrong") ? 401 : 200);
        }
    }

    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void answer(HttpServletResponse resp, int status) throws IOException {
        resp.setStatus(status);
        resp.setContentType("text/plain");
        resp.getWriter().write(Integer.toString(status));
    }
}
