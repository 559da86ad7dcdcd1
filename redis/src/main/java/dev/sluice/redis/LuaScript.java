package dev.sluice.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One Lua script of this package besides {@code decide.lua} ({@code reserve.lua}, {@code refund.lua},
 * {@code pause.lua}, {@code giveback.lua}, {@code slice.lua}, {@code lease.lua}): composed from the
 * class path once ({@link LuaSource}), sent by its SHA-1 and in full after {@code NOSCRIPT} (which
 * caches it again), never retried by the client, because these scripts consume or give back
 * and a re-sent one would do it twice.
 */
final class LuaScript {

    private final String name;
    private final String text;
    private final String sha;
    private final RedisCalls calls;

    /** A script counting by the algorithms: {@code driver} composed behind them ({@link LuaSource#compose}). */
    LuaScript(RedisCalls calls, String driver) {
        this(calls, driver, LuaSource.compose(driver));
    }

    private LuaScript(RedisCalls calls, String name, String text) {
        this.name = name;
        this.text = text;
        this.sha = DecideScript.sha1(text);
        this.calls = calls;
    }

    /** A script that counts by no algorithm ({@code lease.lua}): its file alone. */
    static LuaScript alone(RedisCalls calls, String file) {
        return new LuaScript(calls, file, LuaSource.alone(file));
    }

    /** Loads the script into the script cache of every master (and replica). */
    CompletableFuture<Void> loadEverywhere() {
        return calls.load(text);
    }

    /** Runs the script on the node of {@code keys}' slot (they share one hash tag). */
    <R> CompletableFuture<R> eval(RedisCalls.Reply type, List<Object> keys, Object... args) {
        return calls.<R>evalSha(sha, type, keys, args)
                .handle((reply, failure) -> {
                    if (failure == null) {
                        return CompletableFuture.completedFuture(reply);
                    }
                    Throwable cause = DecideScript.unwrap(failure);
                    if (calls.noScript(cause)) {
                        // NOSCRIPT: the script did not run, so sending it in full runs it once.
                        return calls.<R>eval(text, type, keys, args);
                    }
                    return CompletableFuture.<R>failedFuture(cause);
                })
                .thenCompose(stage -> stage);
    }

    @Override
    public String toString() {
        return name;
    }
}
