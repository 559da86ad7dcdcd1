package dev.sluice.redis;

import dev.sluice.internal.Timeouts;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * A store's Redis client: made from a {@code store} value (then owned, connected off the calling
 * thread and shut down on {@link #close()}), or borrowed from the application (then
 * connected as the application chose, and left alone).
 *
 * <p>Getting ready happens on a thread of its own, in two steps: {@code getReady} (one connection
 * per master, the scripts loaded) makes the store ready; {@code fillIn} (the rest of the pool, the
 * round trips) follows behind it, while the store already decides. Our client's store is
 * <em>connecting</em> until the first step succeeds; <em>unreachable</em> once Redis has refused
 * the connection (nothing listens, no route, no such host) or two attempts in a row have failed,
 * until one succeeds (tried every {@value #RETRY_MILLIS} ms); then <em>ready</em> for good. A
 * single attempt that timed out does not make it unreachable: on a busy machine a cold client
 * can miss its own timeouts against a healthy Redis. A request of a connecting store waits for
 * it ({@link #whenReady}); one of an unreachable store fails at once.
 */
final class RedisConnection {

    /** How long an unreachable Redis is left alone between attempts to get ready. */
    private static final int RETRY_MILLIS = 500;

    /** The store's category, as users have configured it. */
    private final Logger log;
    private final RedisCalls client;
    private final boolean owned;
    private final Runnable getReady;
    private final Runnable fillIn;
    private final long startupWaitNanos;
    private final AtomicBoolean connecting = new AtomicBoolean();
    /** Completed once {@code getReady} has succeeded: the scripts are loaded. */
    private final CompletableFuture<Void> loaded = new CompletableFuture<>();
    /** Completed once {@code fillIn} has run, however it went. */
    private final CompletableFuture<Void> filled = new CompletableFuture<>();
    /** Completed once Redis is found unreachable (see above): the requests waiting then fail too. */
    private final CompletableFuture<Void> foundUnreachable = new CompletableFuture<>();
    /** Attempts that failed in a row; the connecting thread's alone. */
    private int failedAttempts;
    private volatile boolean ready;
    private volatile boolean unreachable;
    private volatile boolean closed;

    /**
     * @param store       the store's class: its logger
     * @param getReady    run to get ready: loads the scripts on every master, which opens a
     *                    connection to each; throws while Redis is unreachable
     * @param fillIn      run once ready, while requests are decided: the rest of the connections,
     *                    the round trips; a failure there is not the store's
     * @param startupWait the longest a request of a connecting store waits for it, unless the
     *                    request's own timeout is longer
     * @param deadline    when (in {@link System#nanoTime()}) to stop waiting here for readiness
     *                    and the pool filled in behind it
     */
    RedisConnection(Class<?> store, RedisCalls client, boolean owned, Runnable getReady, Runnable fillIn,
                    Duration startupWait, long deadline) {
        this.log = LoggerFactory.getLogger(store);
        this.client = client;
        this.owned = owned;
        this.getReady = getReady;
        this.fillIn = fillIn;
        this.startupWaitNanos = startupWait.toNanos();
        // Get ready (and fill in) on a thread of our own and wait for it until the deadline, so that
        // a store whose Redis is up is built ready, with the connections a first burst needs (a far
        // Redis takes a round trip to open one). Our client connects lazily, and may make the first
        // connection on the calling thread: a request must never pay for that (or wait out a
        // connect timeout). A request that comes before our client is ready waits for it
        // (whenReady); the application's client is connected (or connecting) as it chose: its store
        // decides at once, whatever the outcome of getting ready, which is tried once.
        this.ready = !owned;
        connectInBackground();
        awaitReady(deadline);
    }

    /**
     * A client made by {@code create}, on a short-lived thread of our own. Creating a client leaves netty's
     * {@code InternalThreadLocalMap} (a class of the client's loader) in a plain {@code ThreadLocal}
     * of the calling thread. In a servlet container that thread is the container's deployment
     * thread, which outlives the application: it would keep every undeployed application's class
     * loader reachable. Our thread ends here, and its thread-locals with it.
     */
    static <C> C createOffThread(Supplier<C> create) {
        Object[] created = new Object[1];
        Throwable[] failed = new Throwable[1];
        Thread creator = new Thread(() -> {
            try {
                created[0] = create.get();
            } catch (RuntimeException | Error e) {
                failed[0] = e;
            }
        }, "sluice-redis-create");
        creator.setDaemon(true);
        creator.start();
        boolean interrupted = false;
        while (true) {
            try {
                creator.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the client must not be left behind half-made: finish, then re-assert
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failed[0] instanceof RuntimeException e) {
            throw e;
        }
        if (failed[0] instanceof Error e) {
            throw e;
        }
        @SuppressWarnings("unchecked")
        C client = (C) created[0];
        return client;
    }

    /** Whether Redis has answered (the scripts are loaded), or the client is the application's. */
    boolean ready() {
        return ready;
    }

    /**
     * {@code null} if ready. Else a stage completed when the store is ready, or exceptionally at
     * once if it is unreachable, when it is found so, or after the larger of
     * {@code atLeast} and the start-up wait; the store keeps trying in the background either way.
     * The failure names no address: a store value can hold a password.
     */
    CompletableFuture<Void> whenReady(Duration atLeast) {
        if (ready) {
            return null;
        }
        connectInBackground();
        if (unreachable) {
            return CompletableFuture.failedFuture(new RedisConnectionException(
                    "not connected to Redis yet: it could not be reached, and is tried again every "
                            + RETRY_MILLIS + " ms"));
        }
        long bound = Math.max(atLeast.toNanos(), startupWaitNanos);
        CompletableFuture<Void> waiter = new CompletableFuture<>();
        loaded.thenRun(() -> waiter.complete(null));
        foundUnreachable.thenRun(() -> waiter.completeExceptionally(new RedisConnectionException(
                "not connected to Redis yet: it could not be reached")));
        ScheduledFuture<?> timer = Timeouts.after(() -> waiter.completeExceptionally(new RedisConnectionException(
                "not connected to Redis yet: no answer within " + TimeUnit.NANOSECONDS.toMillis(bound) + " ms")),
                bound);
        waiter.whenComplete((ok, failure) -> timer.cancel(false));
        return waiter;
    }

    /**
     * The one place requests meet readiness: {@code operation} at once when the store is ready,
     * else once it is ({@link #whenReady}, bounded by the start-up wait), else the failure.
     */
    <T> CompletionStage<T> onceReady(Supplier<CompletionStage<T>> operation) {
        CompletableFuture<Void> ready = whenReady(Duration.ZERO);
        return ready == null ? operation.get() : ready.thenCompose(ok -> operation.get());
    }

    /**
     * Starts getting ready on a daemon thread, unless it has succeeded or is under way; our
     * client's is tried every {@value #RETRY_MILLIS} ms until it succeeds, the application's
     * once. Once ready, the same thread fills the pool in.
     */
    private void connectInBackground() {
        if (loaded.isDone() || closed || !connecting.compareAndSet(false, true)) {
            return;
        }
        Thread connector = new Thread(() -> {
            try {
                while (!closed && !tryToGetReady()) {
                    if (!owned) {
                        return;
                    }
                    Thread.sleep(RETRY_MILLIS);
                }
                if (!closed) {
                    fillIn();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                connecting.set(false);
            }
        }, "sluice-redis-connect");
        connector.setDaemon(true);
        connector.start();
    }

    /** One attempt to get ready; whether it succeeded. */
    private boolean tryToGetReady() {
        try {
            getReady.run();
        } catch (RuntimeException e) {
            failedAttempts++;
            if (!owned) {
                log.debug("Redis is not reachable yet; its first decisions may be slow: {}", e.toString());
                foundUnreachable.complete(null);
            } else {
                log.debug("Redis is not reachable yet; retrying in {} ms: {}", RETRY_MILLIS, e.toString());
                if (refused(e) || failedAttempts >= 2) {
                    unreachable = true;
                    foundUnreachable.complete(null);
                }
            }
            return false;
        }
        ready = true;
        unreachable = false;
        loaded.complete(null);
        return true;
    }

    /** Whether the failure says Redis cannot be reached at all: refused, no route, no such host. */
    private static boolean refused(Throwable failure) {
        // The clients wrap the socket's exception a few levels deep, or as a suppressed one per node
        ArrayDeque<Throwable> seen = new ArrayDeque<>();
        seen.add(failure);
        for (int looked = 0; !seen.isEmpty() && looked < 32; looked++) {
            Throwable t = seen.poll();
            if (t instanceof ConnectException || t instanceof NoRouteToHostException
                    || t instanceof UnknownHostException) {
                return true;
            }
            if (t.getCause() != null && t.getCause() != t) {
                seen.add(t.getCause());
            }
            seen.addAll(Arrays.asList(t.getSuppressed()));
        }
        return false;
    }

    private void fillIn() {
        try {
            fillIn.run();
        } catch (RuntimeException e) {
            // the store is ready; the pool fills in as requests need it
            log.debug("Redis connections not all opened at start-up: {}", e.toString());
        } finally {
            filled.complete(null);
        }
    }

    /**
     * Waits here until ready and filled in, the deadline, or (the application's client) its one
     * attempt failed. Requests do not wait for the filling in: only building does.
     */
    private void awaitReady(long deadline) {
        CompletableFuture<?> settled = owned ? filled : CompletableFuture.anyOf(filled, foundUnreachable);
        try {
            settled.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
            // not ready yet: requests wait for it (bounded), or fail while it is unreachable
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Shuts the client down if it is ours; a borrowed client is left alone. */
    void close() {
        closed = true;
        if (owned) {
            client.shutdown();
        }
    }
}
