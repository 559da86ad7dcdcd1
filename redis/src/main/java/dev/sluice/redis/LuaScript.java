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
 * loaded from the class path once (behind the helpers it shares with {@code decide.lua}, if any), sent by its SHA-1 and in full after {@code NOSCRIPT} (which
 * caches it again), with Redisson's retries disabled, because these scripts consume or give back
 * and a re-sent one would do it twice.
 */
final class LuaScript {

    private final String name;
    private final String text;
    private final String sha;
    private final RScript script;

    /** @param files the script's files, in order: shared helpers first ({@code state.lua}), the script itself last */
    LuaScript(RedissonClient client, String... files) {
        this.name = files[files.length - 1];
        this.text = source(files);
        this.sha = DecideScript.sha1(text);
        this.script = client.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
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

    /**
     * The text Redis runs: the files one after another. Redis scripts cannot load code, so
     * helpers two scripts share ({@code state.lua}) travel in front of each of them.
     */
    static String source(String... files) {
        StringBuilder text = new StringBuilder();
        for (String file : files) {
            text.append(load(file)).append('\n');
        }
        return text.toString();
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
