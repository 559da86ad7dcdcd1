package dev.sluice.redis;

import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.codec.StringCodec;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One Lua script of this package besides {@code decide.lua} ({@code reserve.lua}, {@code refund.lua},
 * {@code pause.lua}, {@code giveback.lua}, {@code slice.lua}, {@code lease.lua}): composed from the
 * class path once ({@link LuaSource}), sent by its SHA-1 and in full after {@code NOSCRIPT} (which
 * caches it again), with Redisson's retries disabled, because these scripts consume or give back
 * and a re-sent one would do it twice.
 */
final class LuaScript {

    private final String name;
    private final String text;
    private final String sha;
    private final RScript script;

    /** A script counting by the algorithms: {@code driver} composed behind them ({@link LuaSource#compose}). */
    LuaScript(RedissonClient client, String driver) {
        this(client, driver, LuaSource.compose(driver));
    }

    private LuaScript(RedissonClient client, String name, String text) {
        this.name = name;
        this.text = text;
        this.sha = DecideScript.sha1(text);
        this.script = client.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
    }

    /** A script that counts by no algorithm ({@code lease.lua}): its file alone. */
    static LuaScript alone(RedissonClient client, String file) {
        return new LuaScript(client, file, LuaSource.alone(file));
    }

    /** Loads the script into the script cache of every master (and replica). */
    CompletableFuture<Void> loadEverywhere() {
        return script.scriptLoadAsync(text).toCompletableFuture().thenRun(() -> { });
    }

    /** Runs the script on the node of {@code keys}' slot (they share one hash tag). */
    <R> CompletableFuture<R> eval(RScript.ReturnType type, List<Object> keys, Object... args) {
        String route = (String) keys.get(0);
        return script.<R>evalShaAsync(route, RScript.Mode.READ_WRITE, sha, type, keys, args).toCompletableFuture()
                .handle((reply, failure) -> {
                    if (failure == null) {
                        return CompletableFuture.completedFuture(reply);
                    }
                    Throwable cause = DecideScript.unwrap(failure);
                    if (cause instanceof RedisNoScriptException) {
                        // NOSCRIPT: the script did not run, so sending it in full runs it once.
                        return script.<R>evalAsync(route, RScript.Mode.READ_WRITE, text, type, keys, args)
                                .toCompletableFuture();
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
