package dev.sluice.servlet;

import dev.sluice.web.Verdict;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;

/**
 * Runs the chain for a request whose verdict has something left to do when its response is
 * complete (a lease to return, a refund to decide), and reports the end
 * ({@link Verdict#responseEnded}) with the status that decides: the status the client received.
 * Once the response is committed its status line is on the wire, so that status decides whatever
 * happens next (an exception, a failed write to a client that reset the connection, an async
 * error or timeout). Before that:
 *
 * <ul>
 *   <li>synchronous: when the chain returns, the response's status; when it throws, 500;
 *   <li>asynchronous (the application called {@code startAsync}, which the request passed down the
 *       chain notices): when the application calls {@code complete()} on the context it got, the
 *       response's status, before the container ends the response (so a client that asks again
 *       at once finds the lease returned); otherwise an {@link AsyncListener} on that context
 *       settles it: {@code onComplete} with the final status, {@code onError} with 500 (an
 *       exception, or a client the container saw go away), {@code onTimeout} with nothing (the
 *       timeout ends in {@code onComplete} with the status the container or the application's
 *       own listener answered).
 * </ul>
 *
 * The listener follows the request into every later async cycle (a {@code dispatch()} whose
 * target calls {@code startAsync()} again, on whatever request it got): the container drops a
 * cycle's listeners when the next starts, so it registers itself again in {@code onStartAsync},
 * as the Servlet specification asks. The completion runs once however many of these see the end.
 */
final class ResponseEnd {

    /** The status an exception, or a failed asynchronous response, counts as before the response is committed. */
    static final int FAILED = 500;

    private ResponseEnd() {
    }

    /**
     * The status that decides a response that failed: once committed, the one the client received
     * (an exception cannot change it any more); before that, {@link #FAILED}.
     */
    static int failed(HttpServletResponse response) {
        return response.isCommitted() ? response.getStatus() : FAILED;
    }

    static void proceed(HttpServletRequest request, HttpServletResponse response, FilterChain chain,
                        Verdict completion) throws IOException, ServletException {
        Noticing noticing = new Noticing(request, response, completion);
        boolean threw = true;
        try {
            chain.doFilter(noticing, response);
            threw = false;
        } finally {
            if (threw) {
                completion.responseEnded(failed(response));
            } else if (!noticing.async) {
                completion.responseEnded(response.getStatus());
            }
        }
    }

    /** The request as the chain sees it: the same, except that starting async mode is noticed. */
    private static final class Noticing extends HttpServletRequestWrapper {
        private final HttpServletResponse response;
        private final Verdict completion;
        /** Whether the request went async; its listener then follows it through every later cycle. */
        private volatile boolean async;

        Noticing(HttpServletRequest request, HttpServletResponse response, Verdict completion) {
            super(request);
            this.response = response;
            this.completion = completion;
        }

        @Override
        public AsyncContext startAsync() {
            return listen(super.startAsync());
        }

        @Override
        public AsyncContext startAsync(ServletRequest servletRequest, ServletResponse servletResponse) {
            return listen(super.startAsync(servletRequest, servletResponse));
        }

        private AsyncContext listen(AsyncContext context) {
            if (!async) {
                async = true;
                context.addListener(new Listener(response, completion));
            }
            return new Completing(context, response, completion);
        }
    }

    /**
     * The application's async context, settling the request when the application completes it and
     * before the container sends the end of the response: a client that has its response and asks
     * again finds the lease returned and the refund made. The listener still settles a cycle that
     * ends otherwise (an error, a timeout, a dispatch); the completion runs once either way.
     */
    private static final class Completing implements AsyncContext {
        private final AsyncContext context;
        private final HttpServletResponse response;
        private final Verdict completion;

        Completing(AsyncContext context, HttpServletResponse response, Verdict completion) {
            this.context = context;
            this.response = response;
            this.completion = completion;
        }

        @Override
        public void complete() {
            try {
                completion.responseEnded(response.getStatus());
            } finally {
                context.complete();
            }
        }

        @Override
        public ServletRequest getRequest() {
            return context.getRequest();
        }

        @Override
        public ServletResponse getResponse() {
            return context.getResponse();
        }

        @Override
        public boolean hasOriginalRequestAndResponse() {
            return context.hasOriginalRequestAndResponse();
        }

        @Override
        public void dispatch() {
            context.dispatch();
        }

        @Override
        public void dispatch(String path) {
            context.dispatch(path);
        }

        @Override
        public void dispatch(ServletContext servletContext, String path) {
            context.dispatch(servletContext, path);
        }

        @Override
        public void start(Runnable run) {
            context.start(run);
        }

        @Override
        public void addListener(AsyncListener listener) {
            context.addListener(listener);
        }

        @Override
        public void addListener(AsyncListener listener, ServletRequest servletRequest,
                ServletResponse servletResponse) {
            context.addListener(listener, servletRequest, servletResponse);
        }

        // Raw on purpose: a generic signature here would name the servlet package in a class-file
        // attribute that the javax transformation does not rewrite.
        @Override
        @SuppressWarnings({"rawtypes", "unchecked"})
        public AsyncListener createListener(Class clazz) throws ServletException {
            return context.createListener(clazz);
        }

        @Override
        public void setTimeout(long timeout) {
            context.setTimeout(timeout);
        }

        @Override
        public long getTimeout() {
            return context.getTimeout();
        }
    }

    /**
     * Hears the end of the request's asynchronous cycles, registering itself again in each new one.
     * A class, not a record: the Eclipse Transformer that makes the javax artifact does not rewrite
     * a record's component attributes, which would keep naming {@code jakarta.servlet}.
     */
    private static final class Listener implements AsyncListener {
        private final HttpServletResponse response;
        private final Verdict completion;

        Listener(HttpServletResponse response, Verdict completion) {
            this.response = response;
            this.completion = completion;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            completion.responseEnded(response.getStatus());
        }

        @Override
        public void onError(AsyncEvent event) {
            completion.responseEnded(failed(response));
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            // Committed: the client has its status, whatever the timeout adds. Otherwise the container
            // (or the application's own listener, called after this one) answers, and onComplete sees it.
            if (response.isCommitted()) {
                completion.responseEnded(response.getStatus());
            }
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // A new cycle, on whichever request it was started: the container has dropped this
            // listener from the old one.
            event.getAsyncContext().addListener(this);
        }
    }
}
