package dev.sluice.redis;

import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.codec.StringCodec;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One Lua script of this package besides {@code decide.lua} ({@code refund.lua}, {@code lease.lua}):
 * loaded from the class path once, sent by its SHA-1 and in full after {@code NOSCRIPT} (which
 * caches it again), with Redisson's retries disabled, because these scripts consume or give back
 * and a re-sent one would do it twice.
 */
final class LuaScript {

    private final String name;
    private final String text;
    private final String sha;
    private final RScript script;

    LuaScript(RedissonClient client, String name) {
        this.name = name;
        this.text = load(name);
        this.sha = DecideScript.sha1(text);
        this.script = client.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
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

    private static String load(String name) {
        try (InputStream in = LuaScript.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
