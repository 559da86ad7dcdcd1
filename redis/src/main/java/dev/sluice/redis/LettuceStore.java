package dev.sluice.redis;

import dev.sluice.TimeSource;
import dev.sluice.internal.Secrets;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.CommandType;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Keeps counting state in Redis, shared by every application node, through Lettuce: the same
 * scripts, the same batching across callers, the same readiness and failure behaviour as
 * {@link RedisStore} (its description holds here word for word), with no Redisson on the class
 * path. For applications that already talk to Redis through Lettuce (Spring Data Redis does):
 * the store borrows their client, or their connection, instead of bringing a second one.
 *
 * <pre>{@code
 * LettuceStore store = LettuceStore.connect("lettuce:redis://127.0.0.1:6379"); // owns its client
 * LettuceStore shared = LettuceStore.of(redisClient);       // one connection on your client
 * LettuceStore cluster = LettuceStore.of(redisClusterClient); // Redis Cluster: MOVED/ASK followed by Lettuce
 * }</pre>
 *
 * <p>A store made by {@link #connect} owns its client and shuts it down on {@link #close()}. One
 * made on the application's client opens one connection of its own on it (keys and values as
 * UTF-8 strings), off the caller's thread, and closes only that connection; one made on the
 * application's connection (it must have a {@link StringCodec}) leaves it open. A Lettuce
 * connection carries every caller's commands at once, so there is no pool: concurrent decisions
 * share script calls as on Redisson ({@code Coalescer}), and on a cluster each caller's batch is
 * its own call, routed by Lettuce to its slot's master.
 *
 * <p>On failure: Lettuce never retries a command by itself. After a reconnect it replays the
 * commands it had not yet answered; the client of a store made by {@link #connect} is told not to
 * replay its scripts (they may have run, and would charge twice) and to refuse commands while
 * disconnected, so a decision then fails at once and follows the limiter's failure mode. Give a
 * borrowed client the same options ({@link #clientOptions()}) to have the same guarantee. Its
 * commands time out after 1 s, as the Redisson store's; the limiter's own timeout is usually
 * shorter. Thread-safe.
 */
public final class LettuceStore extends ScriptStore {

    /** The scheme of {@code store=lettuce:redis://host:port[/db]}. */
    static final String SCHEME = "lettuce:";
    /** The highest database index of a Redis server with its default {@code databases 16}. */
    private static final int MAX_DATABASE = 15;

    private LettuceStore(Builder builder) {
        super(builder.settings.on(builder.calls, null));
    }

    /**
     * A store on its own Lettuce client, from a {@code store} value: {@code lettuce:redis://host:port[/db]}
     * or {@code lettuce:rediss://host:port[/db]} (TLS); a user and password may precede the host.
     *
     * @throws IllegalArgumentException naming the value (its password hidden) if it is malformed
     */
    public static LettuceStore connect(String store) {
        return builder().connect(store).build();
    }

    /**
     * A store on the application's client (a {@link RedisClient} created with its URI, or a
     * {@link RedisClusterClient}): one connection of the store's own on it, closed with the store.
     */
    public static LettuceStore of(AbstractRedisClient client) {
        return builder().client(client).build();
    }

    /** A store on the application's connection (keys and values as strings), which it keeps. */
    public static LettuceStore of(StatefulRedisConnection<String, String> connection) {
        return builder().connection(connection).build();
    }

    /** A store on the application's Redis Cluster connection (keys and values as strings), which it keeps. */
    public static LettuceStore of(StatefulRedisClusterConnection<String, String> connection) {
        return builder().connection(connection).build();
    }

    /**
     * A store whose decisions use {@code time} instead of the Redis server's clock. For tests
     * only: in production every application node would bring its own clock.
     */
    public static LettuceStore forTesting(AbstractRedisClient client, TimeSource time) {
        return builder().client(client).timeSourceForTesting(time).build();
    }

    /** A builder, for the settings {@link #connect} and {@link #of} leave at their defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The options a store made by {@link #connect} gives its client: commands time out after 1 s,
     * fail at once while disconnected, and scripts are never replayed after a reconnect. Set them on
     * a client of the application's for the same failure behaviour.
     */
    public static ClientOptions clientOptions() {
        return ClientOptions.builder()
                .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(2)).build())
                .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(1)))
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                // A script written before the connection dropped may have run: replayed, it would charge twice.
                .replayFilter(command -> command.getType() == CommandType.EVALSHA
                        || command.getType() == CommandType.EVAL || command.getType() == CommandType.FCALL)
                .build();
    }

    /**
     * The Lettuce URI of a {@code store} value ({@code lettuce:} then a {@code redis://} or
     * {@code rediss://} URI), checked: the scheme, a host, the port's range, the database's.
     *
     * @throws IllegalArgumentException naming {@code 'store'} and the value, its password hidden
     */
    static RedisURI uri(String store) {
        if (!store.startsWith(SCHEME)) {
            throw new IllegalArgumentException("'store' must be lettuce:redis://host:port[/db] or "
                    + "lettuce:rediss://host:port[/db], got '" + Secrets.redact(store) + "'");
        }
        return address(store.substring(SCHEME.length()), store);
    }

    /**
     * The Lettuce URI of a {@code redis://} or {@code rediss://} address, checked; messages name
     * {@code store}, the value as the user wrote it, its password hidden.
     */
    static RedisURI address(String address, String store) {
        String shown = Secrets.redact(store);
        String usage = "'store' must be " + (store.startsWith(SCHEME) ? "lettuce:" : "") + "redis://host:port[/db] or "
                + (store.startsWith(SCHEME) ? "lettuce:" : "") + "rediss://host:port[/db], got '" + shown + "'";
        URI uri;
        try {
            uri = URI.create(address);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(usage); // no cause: its text would repeat the password
        }
        if (!("redis".equals(uri.getScheme()) || "rediss".equals(uri.getScheme())) || uri.getHost() == null
                || uri.getQuery() != null || uri.getFragment() != null) {
            throw new IllegalArgumentException(usage);
        }
        int port = uri.getPort() < 0 ? RedisURI.DEFAULT_REDIS_PORT : uri.getPort();
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("'store' has port " + port + ", outside 1 to 65535, got '"
                    + shown + "'");
        }
        String path = uri.getPath() == null ? "" : uri.getPath();
        int database = 0;
        if (!path.isEmpty() && !path.equals("/")) {
            String digits = path.substring(1);
            if (!digits.matches("[0-9]{1,2}") || Integer.parseInt(digits) > MAX_DATABASE) {
                throw new IllegalArgumentException("'store' names database '" + digits + "'; Redis numbers them 0 to "
                        + MAX_DATABASE + ", got '" + shown + "'");
            }
            database = Integer.parseInt(digits);
        }
        RedisURI.Builder built = RedisURI.builder().withHost(uri.getHost()).withPort(port).withDatabase(database)
                .withSsl("rediss".equals(uri.getScheme())).withTimeout(Duration.ofSeconds(1));
        if (uri.getRawUserInfo() != null) {
            String[] user = uri.getUserInfo().split(":", 2);
            if (user.length == 2 && !user[0].isEmpty()) {
                built.withAuthentication(user[0], user[1]);
            } else {
                built.withPassword((user.length == 2 ? user[1] : user[0]).toCharArray());
            }
        }
        return built.build();
    }

    /** Settings of a {@link LettuceStore}. */
    public static final class Builder {
        private final StoreSettings settings = new StoreSettings();
        private RedisCalls calls;

        private Builder() {
        }

        /** Creates and owns a client from a {@code store} value; see {@link LettuceStore#connect}. */
        public Builder connect(String store) {
            RedisURI uri = uri(store);
            long createdNanos = System.nanoTime();
            RedisClient client = RedisConnection.createOffThread(() -> RedisClient.create(uri));
            client.setOptions(clientOptions());
            this.calls = LettuceCalls.opening(() -> client.connect(StringCodec.UTF8), false, client);
            settings.owned(createdNanos);
            return this;
        }

        /**
         * Uses the application's client ({@link RedisClient}, created with its URI, or
         * {@link RedisClusterClient}), on one connection of the store's own; the client is the
         * application's to shut down.
         */
        public Builder client(AbstractRedisClient client) {
            Objects.requireNonNull(client, "client");
            Supplier<StatefulConnection<String, String>> connect;
            if (client instanceof RedisClusterClient cluster) {
                connect = () -> cluster.connect(StringCodec.UTF8);
            } else if (client instanceof RedisClient single) {
                connect = () -> single.connect(StringCodec.UTF8);
            } else {
                throw new IllegalArgumentException("'client' must be a RedisClient or a RedisClusterClient, got "
                        + client.getClass().getName());
            }
            this.calls = LettuceCalls.opening(connect, client instanceof RedisClusterClient, null);
            settings.borrowed();
            return this;
        }

        /**
         * Uses the application's connection, to one server or a cluster ({@link StatefulRedisConnection}
         * or {@link StatefulRedisClusterConnection}, keys and values as strings), which it keeps open.
         */
        public Builder connection(StatefulConnection<String, String> connection) {
            Objects.requireNonNull(connection, "connection");
            if (!(connection instanceof StatefulRedisConnection
                    || connection instanceof StatefulRedisClusterConnection)) {
                throw new IllegalArgumentException("'connection' must be a StatefulRedisConnection or a "
                        + "StatefulRedisClusterConnection, got " + connection.getClass().getName());
            }
            this.calls = LettuceCalls.borrowing(connection);
            settings.borrowed();
            return this;
        }

        /** The start-up wait, as {@link RedisStore.Builder#startupWait}; default 2 s. */
        public Builder startupWait(Duration wait) {
            settings.startupWait(wait);
            return this;
        }

        /** Whether concurrent requests share script calls, as {@link RedisStore.Builder#coalescing}; default on. */
        public Builder coalescing(boolean coalescing) {
            settings.coalescing(coalescing);
            return this;
        }

        /** Callers whose rejections are repeated locally, as {@link RedisStore.Builder#localRejections}. */
        public Builder localRejections(int maximumCallers) {
            settings.localRejections(maximumCallers);
            return this;
        }

        /** The longest a rejection is repeated locally, as {@link RedisStore.Builder#localRejectionTtl}. */
        public Builder localRejectionTtl(Duration ttl) {
            settings.localRejectionTtl(ttl);
            return this;
        }

        /** When a caller's budget is decided here in slices, as {@link RedisStore.Builder#hotKeyThreshold}. */
        public Builder hotKeyThreshold(int decisionsPerSecond) {
            settings.hotKeyThreshold(decisionsPerSecond);
            return this;
        }

        /**
         * Whether decisions go to a Redis that has functions (7 and later, not a cluster) as a call of
         * a function library ({@code FCALL}) rather than of a script ({@code EVALSHA}); default on.
         * Both run the same Lua with the same answers; the function costs Redis less per decision,
         * because the code in front of the decision runs once, when the library is loaded. A Redis
         * without functions is found at start-up and sent scripts whatever this says.
         */
        public Builder functions(boolean functions) {
            settings.functions(functions);
            return this;
        }

        /** Decides on this clock instead of the Redis server's. For tests only. */
        public Builder timeSourceForTesting(TimeSource time) {
            settings.timeSourceForTesting(time);
            return this;
        }

        /** Builds the store. */
        public LettuceStore build() {
            if (calls == null) {
                throw new IllegalStateException("a LettuceStore needs a client: call connect(..), client(..) or "
                        + "connection(..)");
            }
            return new LettuceStore(this);
        }
    }
}
