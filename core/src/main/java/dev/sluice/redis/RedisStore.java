package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.RateLimitStore;
import dev.sluice.TimeSource;
import dev.sluice.internal.Keys;
import dev.sluice.internal.Units;
import org.redisson.Redisson;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Keeps counting state in Redis, shared by every application node, through Redisson.
 *
 * <p>Each decision is one {@code EVALSHA} of {@code decide.lua}: one round trip, atomic, all
 * limits of the decision at once. The script reads the Redis server's clock, so application
 * clocks do not matter; it gives every key it writes a TTL; it keeps all keys of one decision
 * under one hash tag (the caller), so it runs on Redis Cluster. The script is sent by its SHA-1;
 * when Redis answers {@code NOSCRIPT} (after a restart or {@code SCRIPT FLUSH}), it is sent once
 * in full, which also reloads it. The call is sent with Redisson's retries disabled: a consuming
 * script re-sent after a response timeout would charge the caller twice, so a late answer becomes
 * a failure for the limiter's {@link dev.sluice.FailureMode} instead.
 *
 * <pre>{@code
 * RedisStore store = RedisStore.connect("redis://127.0.0.1:6379");      // owns its client
 * RedisStore shared = RedisStore.of(redissonClient);                     // borrows yours
 * }</pre>
 *
 * <p>A store made by {@link #connect} owns its client and shuts it down on {@link #close()}; one
 * made by {@link #of} leaves the client to its owner. A store connects lazily: an application
 * whose Redis is down still starts, and its decisions follow the failure mode until Redis answers.
 * Thread-safe.
 */
public final class RedisStore implements RateLimitStore {

    static final String SCRIPT = loadScript();
    static final String SHA = sha1(SCRIPT);
    private static final int ARGS_PER_LIMIT = 7;

    private final RedissonClient client;
    private final boolean owned;
    private final RScript script;
    private final TimeSource testTime;

    private RedisStore(RedissonClient client, boolean owned, TimeSource testTime) {
        this.client = client;
        this.owned = owned;
        this.testTime = testTime;
        this.script = client.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
    }

    /**
     * A store on its own Redisson client, from a {@code store} value: {@code redis://host:port[/db]},
     * {@code rediss://host:port[/db]} (TLS) or {@code redisson:PATH} (a Redisson YAML file, for
     * cluster, sentinel and every other Redisson setting).
     *
     * @throws IllegalArgumentException naming the value if it is malformed or the file unreadable
     */
    public static RedisStore connect(String store) {
        return new RedisStore(Redisson.create(config(store)), true, null);
    }

    /** A store on a client the application owns and closes. */
    public static RedisStore of(RedissonClient client) {
        return new RedisStore(Objects.requireNonNull(client, "client"), false, null);
    }

    /**
     * A store whose decisions use {@code time} instead of the Redis server's clock. For tests
     * only: in production every application node would bring its own clock, and a skewed one
     * could admit extra requests.
     */
    public static RedisStore forTesting(RedissonClient client, TimeSource time) {
        return new RedisStore(Objects.requireNonNull(client, "client"), false, Objects.requireNonNull(time, "time"));
    }

    /**
     * The Redisson configuration for a {@code store} value; see {@link #connect}.
     *
     * @throws IllegalArgumentException naming the value if it is malformed or the file unreadable
     */
    public static Config config(String store) {
        Config config;
        if (store.startsWith("redisson:")) {
            File file = new File(store.substring("redisson:".length()));
            try {
                config = Config.fromYAML(file);
            } catch (IOException | RuntimeException e) {
                throw new IllegalArgumentException("'store' names a Redisson YAML file that cannot be read ("
                        + e.getMessage() + "), got '" + store + "'", e);
            }
        } else {
            URI uri;
            try {
                uri = URI.create(store);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'store' must be redis://host:port[/db], got '" + store + "'", e);
            }
            if (!("redis".equals(uri.getScheme()) || "rediss".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new IllegalArgumentException("'store' must be redis://host:port[/db] or rediss://host:port[/db], got '"
                        + store + "'");
            }
            String path = uri.getPath() == null ? "" : uri.getPath().replace("/", "");
            config = new Config();
            var single = config.useSingleServer()
                    .setAddress(uri.getScheme() + "://" + uri.getHost() + ":" + (uri.getPort() < 0 ? 6379 : uri.getPort()))
                    .setDatabase(path.isEmpty() ? 0 : Integer.parseInt(path))
                    .setConnectTimeout(2_000)
                    .setTimeout(1_000)
                    .setRetryAttempts(0)
                    .setConnectionMinimumIdleSize(2)
                    .setSubscriptionConnectionMinimumIdleSize(0)
                    .setSubscriptionConnectionPoolSize(1);
            if (uri.getUserInfo() != null) {
                String[] user = uri.getUserInfo().split(":", 2);
                single.setUsername(user.length == 2 && !user[0].isEmpty() ? user[0] : null);
                single.setPassword(user.length == 2 ? user[1] : user[0]);
            }
        }
        config.setLazyInitialization(true);
        return config;
    }

    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
        String tag = Keys.tag(caller);
        int n = limits.size();
        List<Object> keys = new ArrayList<>(n);
        Object[] args = new Object[1 + ARGS_PER_LIMIT * n];
        args[0] = testTime == null ? "" : Long.toString(testTime.nowMicros());
        for (int i = 0; i < n; i++) {
            Limit limit = limits.get(i);
            keys.add(Keys.key(tag, limit.policy(), limit.algorithm().keySuffix()));
            int base = 1 + ARGS_PER_LIMIT * i;
            args[base] = Integer.toString(limit.algorithm().ordinal() + 1);
            args[base + 1] = Long.toString(limit.count());
            args[base + 2] = Long.toString(limit.periodMicros());
            if (limit.algorithm().hasBurst()) {
                Units units = Units.of(limit);
                args[base + 3] = Long.toString(units.unitsPerToken());
                args[base + 4] = Long.toString(units.unitsPerMicro());
                args[base + 5] = Long.toString(units.capacityUnits());
            } else {
                args[base + 3] = "1";
                args[base + 4] = "1";
                args[base + 5] = Long.toString(limit.count());
            }
            args[base + 6] = Long.toString(limit.cost());
        }
        String route = (String) keys.get(0);
        CompletableFuture<List<Object>> sent = script.<List<Object>>evalShaAsync(route, RScript.Mode.READ_WRITE, SHA,
                RScript.ReturnType.LIST, keys, args).toCompletableFuture();
        return sent
                .handle((reply, failure) -> {
                    if (failure == null) {
                        return CompletableFuture.completedFuture(reply);
                    }
                    if (unwrap(failure) instanceof RedisNoScriptException) {
                        // NOSCRIPT: the script did not run, so sending it in full charges once.
                        return script.<List<Object>>evalAsync(route, RScript.Mode.READ_WRITE, SCRIPT,
                                RScript.ReturnType.LIST, keys, args).toCompletableFuture();
                    }
                    return CompletableFuture.<List<Object>>failedFuture(unwrap(failure));
                })
                .thenCompose(stage -> stage)
                .thenApply(reply -> toDecision(reply, limits));
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    static Decision toDecision(List<Object> reply, List<Limit> limits) {
        boolean allowed = number(reply, 0) == 1;
        List<Decision.Quota> quotas = new ArrayList<>(limits.size());
        Duration retry = Duration.ZERO;
        for (int i = 0; i < limits.size(); i++) {
            int base = 1 + 4 * i;
            Duration limitRetry = Duration.of(number(reply, base + 3), ChronoUnit.MICROS);
            quotas.add(new Decision.Quota(limits.get(i), number(reply, base) == 1, number(reply, base + 1),
                    Duration.of(number(reply, base + 2), ChronoUnit.MICROS), limitRetry));
            if (limitRetry.compareTo(retry) > 0) {
                retry = limitRetry;
            }
        }
        return new Decision(allowed ? Decision.Outcome.ALLOWED : Decision.Outcome.REJECTED, quotas,
                allowed ? Duration.ZERO : retry);
    }

    private static long number(List<Object> reply, int index) {
        return ((Number) reply.get(index)).longValue();
    }

    /** The Redisson client this store sends its scripts through. */
    public RedissonClient client() {
        return client;
    }

    /** Shuts the client down if this store created it; a borrowed client is left alone. */
    @Override
    public void close() {
        if (owned) {
            client.shutdown();
        }
    }

    private static String loadScript() {
        try (InputStream in = RedisStore.class.getResourceAsStream("decide.lua")) {
            if (in == null) {
                throw new IllegalStateException("decide.lua is missing from the class path");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every Java platform", e);
        }
    }
}
