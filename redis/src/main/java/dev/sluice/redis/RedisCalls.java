package dev.sluice.redis;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The seam between the store and its Redis client: every command the store's parts send, and the
 * few failures they tell apart, whichever client carries them ({@link RedissonCalls} or
 * {@link LettuceCalls}). Everything above it (the scripts' protocol, the batching across callers,
 * the hot keys, readiness) is written once, against this. Implementations send a consuming
 * script at most once: no retries of their own after a timeout or a lost connection.
 */
interface RedisCalls {

    /** How a script's reply is read: one integer, or a flat list of integers and strings. */
    enum Reply { LONG, LIST }

    /** {@code EVALSHA} on the node of {@code keys}' slot (they share one hash tag); never retried. */
    <R> CompletableFuture<R> evalSha(String sha, Reply reply, List<Object> keys, Object[] args);

    /** {@code EVAL} of the script's full text (which caches it again), as {@link #evalSha}. */
    <R> CompletableFuture<R> eval(String script, Reply reply, List<Object> keys, Object[] args);

    /** Loads a script into the script cache of every master (and replica). */
    CompletableFuture<Void> load(String script);

    /**
     * {@code FCALL} of a function of a loaded library ({@link #loadLibrary}) on the node of
     * {@code keys}' slot, as {@link #evalSha}; never retried.
     */
    <R> CompletableFuture<R> fcall(String function, Reply reply, List<Object> keys, Object[] args);

    /** {@code FUNCTION LOAD REPLACE} of a library on every master (Redis 7 and later). */
    CompletableFuture<Void> loadLibrary(LuaSource.Library library);

    /** A command that changes nothing ({@code SCRIPT EXISTS}), to open a connection ahead of a burst. */
    CompletableFuture<Void> touch(String sha);

    /** {@code DEL} of keys that share one hash tag. */
    CompletableFuture<Void> delete(String[] keys);

    /** {@code HGETALL} of a hash of strings. */
    CompletableFuture<Map<String, String>> hashAll(String key);

    /** {@code HSET} of one field, or {@code HDEL} when {@code value} is {@code null}. */
    CompletableFuture<Void> hashPut(String key, String field, String value);

    /** {@code ZREM} of one member. */
    CompletableFuture<Void> sortedSetRemove(String key, String member);

    /** Whether the client talks to a Redis Cluster: a call's batches then spread over masters. */
    boolean cluster();

    /** Whether Redis answered {@code NOSCRIPT}: the script did not run. */
    boolean noScript(Throwable cause);

    /** Whether Redis answered that it has no such function ({@code FUNCTION FLUSH}, a new master): it did not run. */
    default boolean noFunction(Throwable cause) {
        return messageHas(cause, "Function not found");
    }

    /**
     * Whether Redis did not know the command (a Redis before 7 asked for {@code FUNCTION} or
     * {@code FCALL}), or the user may not send it: it did not run.
     */
    default boolean unknownCommand(Throwable cause) {
        return messageHas(cause, "unknown command") || messageHas(cause, "NOPERM");
    }

    /** Whether a failure's message, written by Redis whichever client carries it, holds {@code text}. */
    private static boolean messageHas(Throwable cause, String text) {
        String message = cause.getMessage();
        return message != null && message.contains(text);
    }

    /** Whether the call was redirected ({@code MOVED}, {@code ASK}) and the client gave up following it. */
    boolean redirected(Throwable cause);

    /**
     * Whether the call did not run because its slot is moving and Redis said to try again
     * ({@code TRYAGAIN}), or the client knows no master for the slot yet.
     */
    boolean tryAgain(Throwable cause);

    /** Shuts the client down: only a client the store made itself. */
    void shutdown();
}
