package dev.sluice.servlet;

import dev.sluice.web.Completion;
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
 * Runs the chain for a request whose guard has something left to do when its response is complete
 * (a lease to return, a refund to decide), and calls the {@link Completion} with the final status:
 *
 * <ul>
 *   <li>synchronous: when the chain returns, with the response's status; when it throws, with 500;
 *   <li>asynchronous (the application called {@code startAsync}, which the request passed down the
 *       chain notices): when the application calls {@code complete()} on the context it got, with
 *       the response's status, before the container ends the response (so a client that asks
 *       again at once finds the lease returned); otherwise an {@link AsyncListener} on that
 *       context calls it from {@code onComplete} with the final status, or from {@code onError}
 *       with 500 (an exception, a client that went away); a timeout ends in {@code onComplete}
 *       with the status the timeout produced.
 * </ul>
 *
 * The completion runs once however many of these see the end.
 */
final class ResponseEnd {

    /** The status an exception, or a failed asynchronous response, counts as. */
    static final int FAILED = 500;

    private ResponseEnd() {
    }

    static void proceed(HttpServletRequest request, HttpServletResponse response, FilterChain chain, Completion completion)
            throws IOException, ServletException {
        Noticing noticing = new Noticing(request, response, completion);
        boolean threw = true;
        try {
            chain.doFilter(noticing, response);
            threw = false;
        } finally {
            if (threw) {
                completion.complete(FAILED);
            } else if (!noticing.async) {
                completion.complete(response.getStatus());
            }
        }
    }

    /** The request as the chain sees it: the same, except that starting async mode is noticed. */
    private static final class Noticing extends HttpServletRequestWrapper {
        private final HttpServletResponse response;
        private final Completion completion;
        private volatile boolean async;

        Noticing(HttpServletRequest request, HttpServletResponse response, Completion completion) {
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
            async = true;
            context.addListener(new Listener(response, completion));
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
        private final Completion completion;

        Completing(AsyncContext context, HttpServletResponse response, Completion completion) {
            this.context = context;
            this.response = response;
            this.completion = completion;
        }

        @Override
        public void complete() {
            try {
                completion.complete(response.getStatus());
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
        public void addListener(AsyncListener listener, ServletRequest servletRequest, ServletResponse servletResponse) {
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
     * Hears the end of one asynchronous cycle; a new cycle gets a new listener through {@link Noticing}.
     * A class, not a record: the Eclipse Transformer that makes the javax artifact does not rewrite
     * a record's component attributes, which would keep naming {@code jakarta.servlet}.
     */
    private static final class Listener implements AsyncListener {
        private final HttpServletResponse response;
        private final Completion completion;

        Listener(HttpServletResponse response, Completion completion) {
            this.response = response;
            this.completion = completion;
        }

        @Override
        public void onComplete(AsyncEvent event) {
            completion.complete(response.getStatus());
        }

        @Override
        public void onError(AsyncEvent event) {
            completion.complete(FAILED);
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            // the container (or the application's own listener) ends the response; onComplete sees its status
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // a new cycle started through the request passed down the chain, which listens again
        }
    }
}
