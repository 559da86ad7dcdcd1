package dev.sluice.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Where a limiter completes the asynchronous decisions that waited on their store, unless it is
 * given an executor: pooled daemon threads, {@code sluice-completions}, a new one only when none
 * is free, so a continuation that blocks holds up no other decision and a busy limiter reuses its
 * threads.
 *
 * <p>Why not {@code CompletableFuture}'s default: on a machine whose common pool has a single
 * thread (two cores) that starts a new thread for every task, which cost 16 decisions in flight
 * some 10 ms a round; and the common pool itself, with one thread, would let one blocking
 * continuation hold up every other decision.
 *
 * <p>Like {@link Timeouts}' thread, these belong to Sluice's class loader, keep no context class
 * loader, end after {@value #IDLE_SECONDS} s without work and at once on {@link #shutdown()}, and
 * are started again when next needed.
 *
 * <p>Thread-safe. Not API: this package may change in any release.
 */
public final class CompletionExecutor {

    /** How long an idle thread waits for more work before it ends. */
    static final int IDLE_SECONDS = 2;

    /** The executor: runs each task on a pooled thread. */
    public static final Executor EXECUTOR = CompletionExecutor::execute;

    private static final Object LOCK = new Object();
    private static volatile ThreadPoolExecutor pool;

    private CompletionExecutor() {
    }

    private static void execute(Runnable task) {
        while (true) {
            ThreadPoolExecutor current = pool;
            if (current == null) {
                current = start();
            }
            try {
                current.execute(task);
                return;
            } catch (RejectedExecutionException e) {
                // shut down between our read and the call: start another one
                synchronized (LOCK) {
                    if (pool == current) {
                        pool = null;
                    }
                }
            }
        }
    }

    private static ThreadPoolExecutor start() {
        synchronized (LOCK) {
            ThreadPoolExecutor current = pool;
            if (current == null) {
                current = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE_SECONDS, TimeUnit.SECONDS,
                        new SynchronousQueue<>(), task -> {
                            Thread thread = new Thread(task, "sluice-completions");
                            thread.setDaemon(true);
                            thread.setContextClassLoader(null);
                            return thread;
                        });
                pool = current;
            }
            return current;
        }
    }

    /** Ends the pool's threads once their tasks are done; a later task starts a new pool. */
    public static void shutdown() {
        ThreadPoolExecutor current;
        synchronized (LOCK) {
            current = pool;
            pool = null;
        }
        if (current != null) {
            current.shutdown();
        }
    }
}
