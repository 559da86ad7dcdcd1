package dev.sluice.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The timer behind a limiter's timeout: Sluice's own in place of
 * {@link CompletableFuture#orTimeout}.
 *
 * <p>Why not {@code orTimeout}: the JDK runs it on one JVM-global thread
 * ({@code CompletableFutureDelayScheduler}) that lives forever and is created by whichever thread
 * first needs it. In a servlet container that is a request thread of the first web application,
 * so the JDK thread keeps that application's context class loader, and (in the access-control
 * context every thread inherits) its protection domains, which name the same loader: the first
 * application deployed can never be garbage-collected after it is undeployed.
 *
 * <p>This timer's one daemon thread, {@code sluice-timeouts}, belongs to Sluice's class loader (so
 * to the web application when Sluice is in {@code WEB-INF/lib}), ends by itself after
 * {@value #IDLE_SECONDS} s without pending timeouts, and ends at once on {@link #shutdown()},
 * which the adapters reach when the application releases its last shared store. It is created
 * again when a timeout is next needed. Scheduling costs what {@code orTimeout} does: one queue
 * insertion, and a removal when the answer comes first.
 *
 * <p>Thread-safe. Not API: this package may change in any release.
 */
public final class Timeouts {

    /** How long the thread waits for more work before it ends. */
    static final int IDLE_SECONDS = 2;

    private static final Object LOCK = new Object();
    private static volatile ScheduledThreadPoolExecutor executor;

    private Timeouts() {
    }

    /**
     * Completes {@code future} exceptionally with a {@link TimeoutException} unless it completes
     * within {@code nanos}, as {@link CompletableFuture#orTimeout} does.
     *
     * @return {@code future}
     */
    public static <T> CompletableFuture<T> orTimeout(CompletableFuture<T> future, long nanos) {
        if (future.isDone()) {
            return future;
        }
        ScheduledFuture<?> timer = schedule(() -> future.completeExceptionally(new TimeoutException()), nanos);
        // Cancelled tasks leave the queue at once (removeOnCancelPolicy), so an idle thread can end.
        future.whenComplete((value, failure) -> timer.cancel(false));
        return future;
    }

    /**
     * Runs {@code task} on the timer thread after {@code nanos}: a short task that blocks nothing
     * (completing a future, handing work to an executor). The thread stays while tasks are pending.
     */
    public static ScheduledFuture<?> after(Runnable task, long nanos) {
        return schedule(task, nanos);
    }

    private static ScheduledFuture<?> schedule(Runnable task, long nanos) {
        while (true) {
            ScheduledThreadPoolExecutor current = executor;
            if (current == null) {
                current = start();
            }
            try {
                return current.schedule(task, nanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                // shut down between our read and the call: start another one
                synchronized (LOCK) {
                    if (executor == current) {
                        executor = null;
                    }
                }
            }
        }
    }

    private static ScheduledThreadPoolExecutor start() {
        synchronized (LOCK) {
            ScheduledThreadPoolExecutor current = executor;
            if (current == null) {
                current = new ScheduledThreadPoolExecutor(1, task -> {
                    Thread thread = new Thread(task, "sluice-timeouts");
                    thread.setDaemon(true);
                    // It only completes futures; it should not keep whichever application's loader
                    // was current on the thread that happened to start it.
                    thread.setContextClassLoader(null);
                    return thread;
                });
                current.setRemoveOnCancelPolicy(true);
                current.setKeepAliveTime(IDLE_SECONDS, TimeUnit.SECONDS);
                current.allowCoreThreadTimeOut(true);
                executor = current;
            }
            return current;
        }
    }

    /**
     * Ends the timer thread. Timeouts already scheduled still fire (the thread ends after the
     * last); a later one starts a new thread.
     */
    public static void shutdown() {
        ScheduledThreadPoolExecutor current;
        synchronized (LOCK) {
            current = executor;
            executor = null;
        }
        if (current != null) {
            current.shutdown();
        }
    }

    /** Whether the timer thread is alive, for tests. */
    static boolean running() {
        ScheduledThreadPoolExecutor current = executor;
        return current != null && current.getPoolSize() > 0;
    }
}
