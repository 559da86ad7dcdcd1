package dev.sluice.grpc;

import dev.sluice.web.Verdict;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A call its limits let through: it adds the rate-limit metadata to the response headers (or to
 * the trailers of a call closed without headers) and, when the verdict awaits the end (a
 * concurrency lease, {@code charge=after}), reports the call's end when the application closes
 * it (with its status) or when it is cancelled, so a lease comes back with the call however it
 * ends; the verdict runs the end's work once, on the interceptor's executor, since returning a
 * lease waits (at most the {@code timeout}) on the store.
 */
final class LimitedCall<ReqT, RespT> extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {

    private final Metadata rateLimit;
    private final Verdict verdict;
    /** Where the end's work runs: it may wait on the store, which no gRPC thread should. */
    private final Executor ends;
    /** Set by the application's calls on this call, which grpc-java requires to be serialized. */
    private volatile boolean headersSent;
    /** The HTTP twin of the status the application closed with; 0 until it closes. */
    private volatile int closedWith;

    LimitedCall(ServerCall<ReqT, RespT> call, Metadata rateLimit, Verdict verdict, Executor ends) {
        super(call);
        this.rateLimit = rateLimit;
        this.verdict = verdict;
        this.ends = ends;
    }

    @Override
    public void sendHeaders(Metadata headers) {
        headers.merge(rateLimit);
        headersSent = true;
        super.sendHeaders(headers);
    }

    @Override
    public void close(Status status, Metadata trailers) {
        if (!headersSent) {
            trailers.merge(rateLimit);
        }
        int http = StatusCodes.http(status.getCode());
        closedWith = http;
        try {
            super.close(status, trailers);
        } finally {
            // The status is on its way: the end is known now, as early as the client can call again.
            ended(http);
        }
    }

    /** Reports the call's end to the verdict, once (the verdict sees to that), off this thread. */
    void ended(int status) {
        if (verdict.awaitsEnd()) {
            try {
                ends.execute(() -> verdict.responseEnded(status));
            } catch (RejectedExecutionException e) {
                verdict.responseEnded(status); // the interceptor is closing: end here rather than leak the lease
            }
        }
    }

    /** The application's listener, wrapped to report the call's end to the verdict. */
    ServerCall.Listener<ReqT> ending(ServerCall.Listener<ReqT> listener) {
        if (!verdict.awaitsEnd()) {
            return listener;
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onComplete() {
                try {
                    super.onComplete();
                } finally {
                    int status = closedWith;
                    ended(status == 0 ? 200 : status);
                }
            }

            @Override
            public void onCancel() {
                try {
                    super.onCancel();
                } finally {
                    int status = closedWith;
                    ended(status == 0 ? StatusCodes.http(Status.Code.CANCELLED) : status);
                }
            }
        };
    }
}
