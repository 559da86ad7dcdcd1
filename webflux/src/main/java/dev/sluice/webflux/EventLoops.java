package dev.sluice.webflux;

import io.netty.util.concurrent.EventExecutor;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * The event loop of a request's connection on Reactor Netty, where a decision that waited on its
 * store hands its verdict back: the application's chain then runs where WebFlux runs it, never on
 * the thread that completed the decision, and every write of the exchange comes from its own loop.
 * On another server (or without Reactor Netty on the class path) there is none, and the verdict
 * goes on from the thread that completed it.
 */
final class EventLoops {

    private static final boolean NETTY = present("reactor.netty.Connection")
            && present("io.netty.util.concurrent.EventExecutor");

    private EventLoops() {
    }

    /** The event loop of {@code exchange}'s connection, or {@code null}. */
    static Executor of(ServerWebExchange exchange) {
        if (!NETTY) {
            return null;
        }
        Object server = ServerHttpRequestDecorator.getNativeRequest(exchange.getRequest());
        return server instanceof reactor.netty.Connection connection ? connection.channel().eventLoop() : null;
    }

    /** Runs {@code task} on {@code loop}: at once if already there (or no loop), else handed to it. */
    static void run(Executor loop, Runnable task) {
        if (loop == null || loop instanceof EventExecutor executor && executor.inEventLoop()) {
            task.run();
            return;
        }
        try {
            loop.execute(task);
        } catch (RejectedExecutionException e) {
            task.run(); // the loop is shutting down: the verdict must still be given
        }
    }

    private static boolean present(String type) {
        try {
            Class.forName(type, false, EventLoops.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
