package dev.sluice.grpc;

import io.grpc.Context;
import io.grpc.ServerCall;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The listener of a call whose decision is still pending: it keeps the call's events (few: the
 * application has requested no message yet, so only half-close, readiness and cancellation can
 * arrive) until {@link #start} names the listener they belong to, then replays them in order and
 * passes every later event straight through.
 *
 * <p>Events arrive serialized on the call's executor; {@link #start} runs once, on whichever
 * thread completed the decision. The two meet under this object's lock, which is held only to
 * swap the queue, never while a listener runs, so a transport thread never waits on the
 * application. The replay runs in the call's {@link Context}, which the callbacks of the transport
 * carry on their own.
 */
final class DelayedListener<ReqT> extends ServerCall.Listener<ReqT> {

    private final Context context;
    private List<Consumer<ServerCall.Listener<ReqT>>> pending = new ArrayList<>();
    private boolean passThrough;
    private volatile ServerCall.Listener<ReqT> delegate;

    DelayedListener(Context context) {
        this.context = context;
    }

    /**
     * Hands the call's events, those kept and those to come, to the listener {@code start} gives,
     * called in the call's context; called once. If the application fails on a kept event,
     * {@code failed} hears of it (as grpc-java's executor would close the call) and the rest of
     * the call's events are dropped.
     */
    void start(Supplier<ServerCall.Listener<ReqT>> start, Consumer<RuntimeException> failed) {
        Context previous = context.attach();
        try {
            ServerCall.Listener<ReqT> listener = start.get();
            delegate = listener;
            while (true) {
                List<Consumer<ServerCall.Listener<ReqT>>> batch;
                synchronized (this) {
                    if (pending.isEmpty()) {
                        passThrough = true;
                        return;
                    }
                    batch = pending;
                    pending = new ArrayList<>();
                }
                for (Consumer<ServerCall.Listener<ReqT>> event : batch) {
                    event.accept(listener);
                }
            }
        } catch (RuntimeException e) {
            synchronized (this) {
                delegate = new ServerCall.Listener<>() { };
                pending.clear();
                passThrough = true;
            }
            failed.accept(e);
        } finally {
            context.detach(previous);
        }
    }

    private void event(Consumer<ServerCall.Listener<ReqT>> event) {
        synchronized (this) {
            if (!passThrough) {
                pending.add(event);
                return;
            }
        }
        event.accept(delegate);
    }

    @Override
    public void onMessage(ReqT message) {
        event(l -> l.onMessage(message));
    }

    @Override
    public void onHalfClose() {
        event(ServerCall.Listener::onHalfClose);
    }

    @Override
    public void onCancel() {
        event(ServerCall.Listener::onCancel);
    }

    @Override
    public void onComplete() {
        event(ServerCall.Listener::onComplete);
    }

    @Override
    public void onReady() {
        event(ServerCall.Listener::onReady);
    }
}
