package dev.sluice.redis;

import org.redisson.api.FunctionMode;
import org.redisson.api.FunctionResult;
import org.redisson.api.RFunction;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.RedisNodeNotFoundException;
import org.redisson.client.RedisRedirectException;
import org.redisson.client.RedisTryAgainException;
import org.redisson.client.codec.StringCodec;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** {@link RedisCalls} through Redisson: its scripts sent with retries disabled, strings in and out. */
final class RedissonCalls implements RedisCalls {

    private final RedissonClient client;
    private final RScript script;
    private final RFunction function;

    RedissonCalls(RedissonClient client) {
        this.client = client;
        // No retries: a consuming script re-sent after a response timeout would charge twice.
        this.script = client.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
        this.function = client.getFunction(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
    }

    RedissonClient client() {
        return client;
    }

    static RScript.ReturnType type(Reply reply) {
        return reply == Reply.LONG ? RScript.ReturnType.LONG : RScript.ReturnType.LIST;
    }

    @Override
    public <R> CompletableFuture<R> evalSha(String sha, Reply reply, List<Object> keys, Object[] args) {
        return script.<R>evalShaAsync((String) keys.get(0), RScript.Mode.READ_WRITE, sha, type(reply), keys, args)
                .toCompletableFuture();
    }

    @Override
    public <R> CompletableFuture<R> eval(String text, Reply reply, List<Object> keys, Object[] args) {
        return script.<R>evalAsync((String) keys.get(0), RScript.Mode.READ_WRITE, text, type(reply), keys, args)
                .toCompletableFuture();
    }

    @Override
    public CompletableFuture<Void> load(String text) {
        return script.scriptLoadAsync(text).toCompletableFuture().thenRun(() -> { });
    }

    @Override
    public <R> CompletableFuture<R> fcall(String name, Reply reply, List<Object> keys, Object[] args) {
        return function.<R>callAsync((String) keys.get(0), FunctionMode.WRITE, name,
                reply == Reply.LONG ? FunctionResult.LONG : FunctionResult.LIST, keys, args).toCompletableFuture();
    }

    @Override
    public CompletableFuture<Void> loadLibrary(LuaSource.Library library) {
        // Redisson writes the "#!lua name=" line itself, and sends it to every master.
        return function.loadAndReplaceAsync(library.name(), library.body()).toCompletableFuture();
    }

    @Override
    public CompletableFuture<Void> touch(String sha) {
        return client.getScript(StringCodec.INSTANCE).scriptExistsAsync(new String[] {sha}).toCompletableFuture()
                .thenRun(() -> { });
    }

    @Override
    public CompletableFuture<Void> delete(String[] keys) {
        return client.getKeys().deleteAsync(keys).toCompletableFuture().thenRun(() -> { });
    }

    @Override
    public CompletableFuture<Map<String, String>> hashAll(String key) {
        return client.<String, String>getMap(key, StringCodec.INSTANCE).readAllMapAsync().toCompletableFuture()
                .thenApply(Map::copyOf);
    }

    @Override
    public CompletableFuture<Void> hashPut(String key, String field, String value) {
        var map = client.<String, String>getMap(key, StringCodec.INSTANCE);
        return (value == null ? map.fastRemoveAsync(field) : map.fastPutAsync(field, value)).toCompletableFuture()
                .thenRun(() -> { });
    }

    @Override
    public CompletableFuture<Void> sortedSetRemove(String key, String member) {
        return client.getScoredSortedSet(key, StringCodec.INSTANCE).removeAsync(member).toCompletableFuture()
                .thenRun(() -> { });
    }

    @Override
    public boolean cluster() {
        return client.getConfig().isClusterConfig();
    }

    @Override
    public boolean noScript(Throwable cause) {
        return cause instanceof RedisNoScriptException;
    }

    @Override
    public boolean redirected(Throwable cause) {
        return cause instanceof RedisRedirectException;
    }

    @Override
    public boolean tryAgain(Throwable cause) {
        return cause instanceof RedisTryAgainException || cause instanceof RedisNodeNotFoundException;
    }

    @Override
    public void shutdown() {
        client.shutdown();
    }
}
