package dev.sluice.grpc;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A real Netty gRPC server on 127.0.0.1 serving {@link Echo} behind an interceptor (and the test
 * authentication before it), and a real client channel to it.
 */
final class GrpcServer implements AutoCloseable {

    final Echo echo = new Echo();
    private final Server server;
    final ManagedChannel channel;

    GrpcServer(ServerInterceptor limits) {
        try {
            server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                    .addService(ServerInterceptors.intercept(echo.echo(), limits, Echo.authentication()))
                    .addService(ServerInterceptors.intercept(echo.feed(), limits, Echo.authentication()))
                    .addService(ServerInterceptors.intercept(Echo.other(), limits, Echo.authentication()))
                    .build().start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    }

    /** What one call ended with: its status, response headers (or null) and trailers, and its responses. */
    record Result(Status status, Metadata headers, Metadata trailers, List<String> responses) {
        boolean ok() {
            return status.isOk();
        }

        String header(String name) {
            Metadata.Key<String> key = Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
            return headers == null ? null : headers.get(key);
        }

        String trailer(String name) {
            return trailers.get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
        }
    }

    /** One blocking call of any kind, sending {@code requests} with {@code metadata}. */
    Result call(io.grpc.MethodDescriptor<String, String> method, Map<String, String> metadata, String... requests) {
        Metadata extra = new Metadata();
        metadata.forEach((k, v) -> extra.put(Metadata.Key.of(k, Metadata.ASCII_STRING_MARSHALLER), v));
        AtomicReference<Metadata> headers = new AtomicReference<>();
        AtomicReference<Metadata> trailers = new AtomicReference<>();
        var intercepted = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(extra),
                MetadataUtils.newCaptureMetadataInterceptor(headers, trailers));
        ClientCall<String, String> call = intercepted.newCall(method, CallOptions.DEFAULT.withDeadlineAfter(20,
                TimeUnit.SECONDS));
        List<String> responses = new ArrayList<>();
        CompletableFuture<Status> done = new CompletableFuture<>();
        StreamObserver<String> out = ClientCalls.asyncBidiStreamingCall(call, new StreamObserver<>() {
            @Override
            public void onNext(String value) {
                synchronized (responses) {
                    responses.add(value);
                }
            }

            @Override
            public void onError(Throwable t) {
                done.complete(Status.fromThrowable(t));
            }

            @Override
            public void onCompleted() {
                done.complete(Status.OK);
            }
        });
        for (String request : requests) {
            out.onNext(request);
        }
        out.onCompleted();
        Status status = done.join();
        synchronized (responses) {
            return new Result(status, headers.get(), trailers.get(), List.copyOf(responses));
        }
    }

    /** A unary call that throws the {@link StatusRuntimeException} of a refusal. */
    String say(String request) {
        return ClientCalls.blockingUnaryCall(channel, Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(20,
                TimeUnit.SECONDS), request);
    }

    @Override
    public void close() {
        channel.shutdownNow();
        server.shutdownNow();
        try {
            channel.awaitTermination(10, TimeUnit.SECONDS);
            server.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
