package dev.sluice.grpc;

import dev.sluice.web.Verdict;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.Status;

/**
 * A call its limits let through: it adds the rate-limit metadata to the response headers (or to
 * the trailers of a call closed without headers) and, when the verdict awaits the end (a
 * concurrency lease, {@code charge=after}), reports the call's end once it completes or is
 * cancelled, so a lease comes back with the call however it ends.
 */
final class LimitedCall<ReqT, RespT> extends ForwardingServerCall.SimpleForwardingServerCall<ReqT, RespT> {

    private final Metadata rateLimit;
    private final Verdict verdict;
    /** Touched only by the application's calls on this call, which grpc-java requires to be serialized. */
    private boolean headersSent;
    /** The HTTP twin of the status the application closed with; 0 until it closes. */
    private volatile int closedWith;

    LimitedCall(ServerCall<ReqT, RespT> call, Metadata rateLimit, Verdict verdict) {
        super(call);
        this.rateLimit = rateLimit;
        this.verdict = verdict;
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
        closedWith = StatusCodes.http(status.getCode());
        super.close(status, trailers);
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
                    verdict.responseEnded(status == 0 ? 200 : status);
                }
            }

            @Override
            public void onCancel() {
                try {
                    super.onCancel();
                } finally {
                    int status = closedWith;
                    verdict.responseEnded(status == 0 ? StatusCodes.http(Status.Code.CANCELLED) : status);
                }
            }
        };
    }
}
