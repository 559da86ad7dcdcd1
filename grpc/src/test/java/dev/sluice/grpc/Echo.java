package dev.sluice.grpc;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A tiny service for the tests, without generated code: UTF-8 strings on the wire, one method of
 * each kind, and a stream that stays open until the client cancels it.
 */
final class Echo {

    static final MethodDescriptor.Marshaller<String> UTF8 = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    /** Unary: answers its request. */
    static final MethodDescriptor<String, String> SAY = method("test.Echo/Say", MethodDescriptor.MethodType.UNARY);
    /** Server streaming: answers 1..N for the request N. */
    static final MethodDescriptor<String, String> COUNT =
            method("test.Echo/Count", MethodDescriptor.MethodType.SERVER_STREAMING);
    /** Client streaming: answers the requests joined by commas. */
    static final MethodDescriptor<String, String> JOIN =
            method("test.Echo/Join", MethodDescriptor.MethodType.CLIENT_STREAMING);
    /** Bidi streaming: echoes each request. */
    static final MethodDescriptor<String, String> CHAT =
            method("test.Echo/Chat", MethodDescriptor.MethodType.BIDI_STREAMING);
    /** Server streaming: one message, then open until cancelled. */
    static final MethodDescriptor<String, String> FOLLOW =
            method("test.Feed/Follow", MethodDescriptor.MethodType.SERVER_STREAMING);
    /** Unary: the service throws. */
    static final MethodDescriptor<String, String> FAIL = method("test.Echo/Fail", MethodDescriptor.MethodType.UNARY);
    /** Server streaming, by a raw handler whose listener throws when the call is ready. */
    static final MethodDescriptor<String, String> UNREADY =
            method("test.Echo/Unready", MethodDescriptor.MethodType.SERVER_STREAMING);
    /** Unary, of another service. */
    static final MethodDescriptor<String, String> OTHER = method("test.Other/Say", MethodDescriptor.MethodType.UNARY);

    /** The caller the test authentication puts in the context, from the {@code user} metadata. */
    static final Context.Key<String> USER = Context.key("user");
    static final Metadata.Key<String> USER_HEADER = Metadata.Key.of("user", Metadata.ASCII_STRING_MARSHALLER);

    /** The calls of {@link #FOLLOW} the server saw cancelled. */
    final AtomicInteger cancelled = new AtomicInteger();

    private static MethodDescriptor<String, String> method(String name, MethodDescriptor.MethodType type) {
        return MethodDescriptor.<String, String>newBuilder().setType(type).setFullMethodName(name)
                .setRequestMarshaller(UTF8).setResponseMarshaller(UTF8).build();
    }

    ServerServiceDefinition echo() {
        return ServerServiceDefinition.builder("test.Echo")
                .addMethod(SAY, ServerCalls.asyncUnaryCall((request, out) -> {
                    out.onNext(request);
                    out.onCompleted();
                }))
                .addMethod(FAIL, ServerCalls.asyncUnaryCall((request, out) -> {
                    throw new IllegalStateException("the service failed on " + request);
                }))
                .addMethod(UNREADY, new ServerCallHandler<String, String>() {
                    @Override
                    public ServerCall.Listener<String> startCall(ServerCall<String, String> call, Metadata headers) {
                        call.request(1);
                        return new ServerCall.Listener<>() {
                            @Override
                            public void onReady() {
                                throw new IllegalStateException("the service failed when ready");
                            }
                        };
                    }
                })
                .addMethod(COUNT, ServerCalls.asyncServerStreamingCall((request, out) -> {
                    for (int i = 1; i <= Integer.parseInt(request); i++) {
                        out.onNext(Integer.toString(i));
                    }
                    out.onCompleted();
                }))
                .addMethod(JOIN, ServerCalls.asyncClientStreamingCall(out -> new StreamObserver<String>() {
                    private final StringBuilder joined = new StringBuilder();

                    @Override
                    public void onNext(String value) {
                        joined.append(joined.length() == 0 ? "" : ",").append(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        out.onNext(joined.toString());
                        out.onCompleted();
                    }
                }))
                .addMethod(CHAT, ServerCalls.asyncBidiStreamingCall(out -> new StreamObserver<String>() {
                    @Override
                    public void onNext(String value) {
                        out.onNext(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                    }

                    @Override
                    public void onCompleted() {
                        out.onCompleted();
                    }
                }))
                .build();
    }

    ServerServiceDefinition feed() {
        return ServerServiceDefinition.builder("test.Feed")
                .addMethod(FOLLOW, ServerCalls.asyncServerStreamingCall((request, out) -> {
                    ((ServerCallStreamObserver<String>) out).setOnCancelHandler(cancelled::incrementAndGet);
                    out.onNext("first");
                }))
                .build();
    }

    static ServerServiceDefinition other() {
        return ServerServiceDefinition.builder("test.Other")
                .addMethod(OTHER, ServerCalls.asyncUnaryCall((request, out) -> {
                    out.onNext(request);
                    out.onCompleted();
                }))
                .build();
    }

    /** The test's authentication: the {@code user} metadata becomes {@link #USER} in the call's context. */
    static ServerInterceptor authentication() {
        return new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers,
                                                               ServerCallHandler<Q, R> next) {
                String user = headers.get(USER_HEADER);
                return user == null ? next.startCall(call, headers)
                        : Contexts.interceptCall(Context.current().withValue(USER, user), call, headers, next);
            }
        };
    }
}
