package dev.sluice.grpc;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.Status;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A client of the open-ended {@link Echo#FOLLOW} stream: admitted once its first message comes. */
final class Follower {

    final ClientCall<String, String> call;
    final CompletableFuture<String> first = new CompletableFuture<>();
    final CompletableFuture<Status> end = new CompletableFuture<>();

    private Follower(GrpcServer grpc) {
        call = grpc.channel.newCall(Echo.FOLLOW, CallOptions.DEFAULT);
        call.start(new ClientCall.Listener<>() {
            @Override
            public void onMessage(String message) {
                first.complete(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
                end.complete(status);
            }
        }, new Metadata());
        call.request(1);
        call.sendMessage("go");
        call.halfClose();
    }

    /** Starts following and waits (bounded) until the stream's first message or its end. */
    static Follower follow(GrpcServer grpc) throws Exception {
        Follower f = new Follower(grpc);
        CompletableFuture.anyOf(f.first, f.end).get(20, TimeUnit.SECONDS);
        return f;
    }

    /** Whether the stream was admitted: it got its first message. */
    boolean admitted() {
        return first.isDone();
    }

    /** The status the stream ended with, once it has (bounded wait). */
    Status ended() throws Exception {
        return end.get(20, TimeUnit.SECONDS);
    }

    /** Cancels the stream and waits (bounded) until the client sees it end. */
    Status cancel() throws Exception {
        call.cancel("done following", null);
        return ended();
    }
}
