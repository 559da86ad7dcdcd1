package dev.sluice.webflux;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Watches the threads that serve HTTP, not the Redis client's: Netty's integration counts every
 * Netty-made thread as an event loop, Redisson's own included (its worker pool, {@code redisson-N-M},
 * whose idle threads wait for work in a queue, and its event loops, where its command encoder
 * waits on its own lock). Those are the client's business; a blocking call anywhere else on a
 * watched thread (Reactor Netty's {@code reactor-http-*}, Reactor's schedulers) still fails.
 */
public final class RedissonWorkers implements BlockHoundIntegration {

    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.blockingMethodCallback(method -> {
            if (!Thread.currentThread().getName().startsWith("redisson-")) {
                throw new BlockingOperationError(method);
            }
        });
    }
}
