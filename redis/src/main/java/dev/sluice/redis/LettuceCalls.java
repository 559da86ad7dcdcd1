package dev.sluice.redis;

import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@link RedisCalls} through Lettuce: one connection (Lettuce multiplexes every caller's commands
 * over it, written as they come), to one server or, through Lettuce's cluster client, to a Redis
 * Cluster, where Lettuce routes each script by its first key and follows {@code MOVED} and
 * {@code ASK} itself. Lettuce sends a command once: it has no retries, and a client the store makes
 * is told not to replay its scripts after a reconnect ({@link LettuceStore}).
 *
 * <p>The connection is the application's, or opened here on a client (the application's or the
 * store's) off the caller's thread, and opened again, at most every {@value #RETRY_MILLIS} ms, while
 * the last attempt failed; until it is open, a call fails at once as not connected.
 */
final class LettuceCalls implements RedisCalls {

    /** The least time between two attempts to open the connection. */
    private static final long RETRY_MILLIS = 500;

    private final Supplier<StatefulConnection<String, String>> connect;
    private final boolean cluster;
    /** What {@link #shutdown} closes: the client the store made, or the connection it opened; else nothing. */
    private final Runnable close;
    private volatile CompletableFuture<RedisClusterAsyncCommands<String, String>> commands;
    private volatile StatefulConnection<String, String> opened;
    private long lastAttemptNanos;

    private LettuceCalls(Supplier<StatefulConnection<String, String>> connect, boolean cluster,
                         AbstractRedisClient owned) {
        this.connect = connect;
        this.cluster = cluster;
        this.close = owned != null ? owned::shutdown : () -> {
            StatefulConnection<String, String> connection = opened;
            if (connection != null) {
                connection.closeAsync();
            }
        };
    }

    /** Calls on the application's connection, which it keeps and closes. */
    static LettuceCalls borrowing(StatefulConnection<String, String> connection) {
        LettuceCalls calls = new LettuceCalls(() -> connection, connection instanceof StatefulRedisClusterConnection,
                null);
        calls.commands = CompletableFuture.completedFuture(asyncOf(connection));
        return calls;
    }

    /**
     * Calls on a connection of their own, opened by {@code connect} on a client: the store's
     * ({@code owned}, shut down with the store) or the application's ({@code null}: then only the
     * connection is closed with the store).
     */
    static LettuceCalls opening(Supplier<StatefulConnection<String, String>> connect, boolean cluster,
                                AbstractRedisClient owned) {
        return new LettuceCalls(connect, cluster, owned);
    }

    private static RedisClusterAsyncCommands<String, String> asyncOf(StatefulConnection<String, String> connection) {
        if (connection instanceof StatefulRedisClusterConnection<String, String> clustered) {
            return clustered.async();
        }
        return ((StatefulRedisConnection<String, String>) connection).async();
    }

    /** The connection's commands once it is open; opens it, off this thread, if no attempt is under way. */
    private CompletableFuture<RedisClusterAsyncCommands<String, String>> commands() {
        CompletableFuture<RedisClusterAsyncCommands<String, String>> current = commands;
        if (current != null && !current.isCompletedExceptionally()) {
            return current;
        }
        synchronized (this) {
            current = commands;
            if (current != null && !current.isCompletedExceptionally()) {
                return current;
            }
            if (current != null && System.nanoTime() - lastAttemptNanos < TimeUnit.MILLISECONDS.toNanos(RETRY_MILLIS)) {
                return current; // the last attempt's failure, until the next attempt is due
            }
            lastAttemptNanos = System.nanoTime();
            CompletableFuture<RedisClusterAsyncCommands<String, String>> opening = new CompletableFuture<>();
            commands = opening;
            Thread opener = new Thread(() -> {
                try {
                    StatefulConnection<String, String> connection = connect.get();
                    opened = connection;
                    opening.complete(asyncOf(connection));
                } catch (RuntimeException e) {
                    opening.completeExceptionally(e);
                }
            }, "sluice-lettuce-connect");
            opener.setDaemon(true);
            opener.start();
            return opening;
        }
    }

    private <R> CompletableFuture<R> on(Function<RedisClusterAsyncCommands<String, String>,
            CompletionStage<R>> command) {
        return commands().thenCompose(command);
    }

    private static ScriptOutputType type(Reply reply) {
        return reply == Reply.LONG ? ScriptOutputType.INTEGER : ScriptOutputType.MULTI;
    }

    private static String[] keys(List<Object> keys) {
        String[] out = new String[keys.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (String) keys.get(i);
        }
        return out;
    }

    private static String[] values(Object[] args) {
        String[] out = new String[args.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = String.valueOf(args[i]);
        }
        return out;
    }

    @Override
    public <R> CompletableFuture<R> evalSha(String sha, Reply reply, List<Object> keys, Object[] args) {
        return on(c -> c.<R>evalsha(sha, type(reply), keys(keys), values(args)));
    }

    @Override
    public <R> CompletableFuture<R> eval(String script, Reply reply, List<Object> keys, Object[] args) {
        return on(c -> c.<R>eval(script, type(reply), keys(keys), values(args)));
    }

    @Override
    public CompletableFuture<Void> load(String script) {
        // On a cluster connection Lettuce loads it on every node.
        return on(c -> c.scriptLoad(script)).thenRun(() -> { });
    }

    @Override
    public <R> CompletableFuture<R> fcall(String function, Reply reply, List<Object> keys, Object[] args) {
        return on(c -> c.<R>fcall(function, type(reply), keys(keys), values(args)));
    }

    @Override
    public CompletableFuture<Void> loadLibrary(LuaSource.Library library) {
        // On a cluster connection Lettuce sends it to a master only: the store keeps EVALSHA there.
        return on(c -> c.functionLoad(library.text(), true)).thenRun(() -> { });
    }

    @Override
    public CompletableFuture<Void> touch(String sha) {
        return on(c -> c.scriptExists(sha)).thenRun(() -> { });
    }

    @Override
    public CompletableFuture<Void> delete(String[] keys) {
        return on(c -> c.del(keys)).thenRun(() -> { });
    }

    @Override
    public CompletableFuture<Map<String, String>> hashAll(String key) {
        return on(c -> c.hgetall(key)).thenApply(Map::copyOf);
    }

    @Override
    public CompletableFuture<Void> hashPut(String key, String field, String value) {
        return (value == null ? on(c -> c.hdel(key, field)) : on(c -> c.hset(key, field, value))).thenRun(() -> { });
    }

    @Override
    public CompletableFuture<Void> sortedSetRemove(String key, String member) {
        return on(c -> c.zrem(key, member)).thenRun(() -> { });
    }

    @Override
    public boolean cluster() {
        return cluster;
    }

    @Override
    public boolean noScript(Throwable cause) {
        return cause instanceof RedisNoScriptException;
    }

    @Override
    public boolean redirected(Throwable cause) {
        return cause instanceof RedisCommandExecutionException && startsWith(cause, "MOVED", "ASK");
    }

    @Override
    public boolean tryAgain(Throwable cause) {
        return cause instanceof RedisCommandExecutionException && startsWith(cause, "TRYAGAIN", "CLUSTERDOWN");
    }

    private static boolean startsWith(Throwable cause, String... prefixes) {
        String message = cause.getMessage();
        if (message == null) {
            return false;
        }
        for (String prefix : prefixes) {
            if (message.startsWith(prefix + " ")) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void shutdown() {
        close.run();
    }
}
