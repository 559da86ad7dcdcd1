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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One Lua script of this package besides {@code decide.lua} ({@code reserve.lua}, {@code refund.lua},
 * {@code pause.lua}, {@code giveback.lua}, {@code slice.lua}, {@code lease.lua}): composed from the
 * class path once ({@link #compose}), sent by its SHA-1 and in full after {@code NOSCRIPT} (which
 * caches it again), with Redisson's retries disabled, because these scripts consume or give back
 * and a re-sent one would do it twice.
 *
 * <p>Redis scripts cannot load code, so a script counting by the algorithms travels whole: the
 * shared helpers ({@code shared.lua}), then each algorithm's file of {@code algorithms/} wrapped as a
 * module (a function that {@code use(name)} runs at most once per call, so a call creates the
 * functions of the algorithms it counts by and no others), then the script itself (its driver).
 */
final class LuaScript {

    /** An entry of {@code shared.lua}'s table of algorithm ids: {@code [1] = 'token_bucket',}. */
    private static final Pattern ALGORITHM = Pattern.compile("^ *\\[\\d+] = '(\\w+)',", Pattern.MULTILINE);
    /** A module one file uses: {@code use('bucket')}. */
    private static final Pattern USE = Pattern.compile("use\\('(\\w+)'\\)");

    private final String name;
    private final String text;
    private final String sha;
    private final RScript script;

    /** A script counting by the algorithms: {@code driver} composed behind them ({@link #compose}). */
    LuaScript(RedissonClient client, String driver) {
        this(client, driver, compose(driver));
    }

    private LuaScript(RedissonClient client, String name, String text) {
        this.name = name;
        this.text = text;
        this.sha = DecideScript.sha1(text);
        this.script = client.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
    }

    /** A script that counts by no algorithm ({@code lease.lua}): its file alone. */
    static LuaScript alone(RedissonClient client, String file) {
        return new LuaScript(client, file, load(file));
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
     * The text Redis runs for {@code driver}: {@code shared.lua}, then every algorithm named in its
     * table of ids and every module those {@code use}, each as {@code modules['name'] = function() ... end},
     * then the driver. Composed once per script; its SHA-1 is of this text.
     */
    static String compose(String driver) {
        String shared = load("shared.lua");
        String main = load(driver);
        Set<String> modules = new LinkedHashSet<>();
        Deque<String> pending = new ArrayDeque<>();
        pending.addAll(names(ALGORITHM, shared));
        pending.addAll(names(USE, main));
        StringBuilder text = new StringBuilder(shared).append('\n');
        while (!pending.isEmpty()) {
            String module = pending.removeFirst();
            if (modules.add(module)) {
                String source = load("algorithms/" + module + ".lua");
                pending.addAll(names(USE, source));
                text.append("modules['").append(module).append("'] = function()\n").append(source).append("end\n");
            }
        }
        return text.append(main).append('\n').toString();
    }

    /** The first group of each match of {@code pattern} in {@code text}, in order. */
    private static List<String> names(Pattern pattern, String text) {
        List<String> names = new ArrayList<>();
        Matcher match = pattern.matcher(text);
        while (match.find()) {
            names.add(match.group(1));
        }
        return names;
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
