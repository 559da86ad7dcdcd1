package dev.sluice.redis;

import dev.sluice.TimeSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.Objects;

/**
 * Keeps counting state in Redis, shared by every application node, through Redisson.
 *
 * <p>Each decision is one {@code EVALSHA} of {@code decide.lua}: one round trip, atomic, all
 * limits of the decision at once. The script reads the Redis server's clock, so application
 * clocks do not matter; it gives every key it writes a TTL; it keeps all keys of one decision
 * under one hash tag (the caller), so it runs on Redis Cluster. The script is sent by its SHA-1;
 * when Redis answers {@code NOSCRIPT} (after a restart or {@code SCRIPT FLUSH}), it is sent once
 * in full, which also reloads it. On a Redis 7 (not a cluster) the script is also loaded as a
 * function library, and each decision is an {@code FCALL} of it instead, which costs Redis less
 * ({@link Builder#functions}). The call is sent with Redisson's retries disabled: a consuming
 * script re-sent after a response timeout would charge the caller twice, so a late answer becomes
 * a failure for the limiter's {@link dev.sluice.FailureMode} instead.
 *
 * <pre>{@code
 * RedisStore store = RedisStore.connect("redis://127.0.0.1:6379");      // owns its client
 * RedisStore shared = RedisStore.of(redissonClient);                     // borrows yours
 * }</pre>
 *
 * <p>A store made by {@link #connect} owns its client and shuts it down on {@link #close()}; one
 * made by {@link #of} leaves the client to its owner. Building a store gets it ready, on a thread
 * of its own: the scripts are loaded on every master (a cluster's slots are learnt on the way, and
 * a connection is opened to each), and the store is ready. Behind that, while it decides, 16
 * connections are opened to each node and round trips are measured, which tell a burst's requests
 * whether they can wait for each other. Building waits for all of that at most the
 * {@linkplain Builder#startupWait start-up wait} (2 s by default, counted from
 * {@link Builder#connect}): an application whose Redis is down still starts within it.
 *
 * <p>A request that comes before a store made by {@link #connect} is ready waits for it, at most
 * the larger of the limiter's timeout and the start-up wait (blocking no thread when it was asked
 * asynchronously), and then has its timeout as usual: a healthy Redis is never failed because the
 * store is young. It follows the failure mode only when Redis cannot be reached: at once once the
 * store has found it unreachable (Redis refused the connection, or two attempts in a row failed;
 * one attempt that timed out is no proof on a busy machine), or when its wait is over. The store
 * keeps trying every 500 ms until Redis answers. Thread-safe.
 *
 * <p>Made of the parts every Redis store of Sluice shares ({@link ScriptStore}), on Redisson
 * ({@link RedissonCalls}); on a cluster, a call's batches of one master go out in one pipeline
 * ({@link ClusterCalls}).
 *
 * <p>A caller this instance decides at least {@link Builder#hotKeyThreshold} times a second (a
 * {@code key=global} cap, a hot client), under one token-bucket or GCRA limit, is decided here from
 * slices of its budget taken from Redis; what a slice has left is given back when it expires and on
 * {@link #close()}. The fleet never admits more than the limit; a slice can only hold budget back
 * from other instances, for at most its lifetime (1 s at most).
 */
public final class RedisStore extends ScriptStore {

    /** The default bound on callers whose rejection is remembered locally. */
    public static final int DEFAULT_LOCAL_REJECTIONS = 10_000;
    /** The default longest time a rejection is repeated locally without asking Redis. */
    public static final Duration DEFAULT_LOCAL_REJECTION_TTL = Duration.ofSeconds(1);
    /** The hash of the limit overrides, one field per policy; see {@link #overrides()}. */
    public static final String OVERRIDES_KEY = "sluice:overrides";

    private final RedissonClient client;

    private RedisStore(Builder builder, RedissonClient client) {
        super(builder.settings.on(new RedissonCalls(client), script -> new ClusterCalls(client, script)::decide));
        this.client = client;
    }

    /**
     * A store on its own Redisson client, from a {@code store} value: {@code redis://host:port[/db]},
     * {@code rediss://host:port[/db]} (TLS) or {@code redisson:PATH} (a Redisson YAML file, for
     * cluster, sentinel and every other Redisson setting).
     *
     * @throws IllegalArgumentException naming the value if it is malformed or the file unreadable
     */
    public static RedisStore connect(String store) {
        return builder().connect(store).build();
    }

    /** A store on a client the application owns and closes. */
    public static RedisStore of(RedissonClient client) {
        return builder().client(client).build();
    }

    /**
     * A store whose decisions use {@code time} instead of the Redis server's clock. For tests
     * only: in production every application node would bring its own clock, and a skewed one
     * could admit extra requests.
     */
    public static RedisStore forTesting(RedissonClient client, TimeSource time) {
        return builder().client(client).timeSourceForTesting(time).build();
    }

    /** A builder, for the settings {@link #connect} and {@link #of} leave at their defaults. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The Redisson configuration for a {@code store} value; see {@link #connect}.
     *
     * @throws IllegalArgumentException naming the value if it is malformed or the file unreadable
     */
    public static Config config(String store) {
        return StoreConfig.of(store);
    }

    /** The Redisson client this store sends its scripts through. */
    public RedissonClient client() {
        return client;
    }

    /** Settings of a {@link RedisStore}. */
    public static final class Builder {
        private final StoreSettings settings = new StoreSettings();
        private RedissonClient client;

        private Builder() {
        }

        /**
         * The start-up wait: the longest building the store waits for it to get ready and fill its
         * pool in (see {@link RedisStore}), counted from {@link #connect} for a client the store makes (making it
         * involves no network), from {@link #build()} otherwise; and, for a store made by
         * {@link #connect}, the longest a request that comes before it is ready waits for it (the
         * limiter's timeout if that is longer). Default 2 s; zero builds without waiting. A Redis
         * that is down is not an error: the store is built anyway and keeps connecting in the
         * background; once it has found Redis unreachable (see {@link RedisStore}) its requests
         * follow the failure mode at once, until Redis answers.
         *
         * @throws IllegalArgumentException naming {@code 'startupWait'} if negative
         */
        public Builder startupWait(Duration wait) {
            settings.startupWait(wait);
            return this;
        }

        /** Uses a client the application owns and closes. */
        public Builder client(RedissonClient client) {
            this.client = Objects.requireNonNull(client, "client");
            settings.borrowed();
            return this;
        }

        /** Creates and owns a client from a {@code store} value; see {@link RedisStore#connect}. */
        public Builder connect(String store) {
            long createdNanos = System.nanoTime();
            Config config = config(store);
            this.client = RedisConnection.createOffThread(() -> Redisson.create(config));
            settings.owned(createdNanos);
            return this;
        }

        /** Whether concurrent requests (of one caller, and of different callers) share script calls; default on. */
        public Builder coalescing(boolean coalescing) {
            settings.coalescing(coalescing);
            return this;
        }

        /**
         * How many callers' recent rejections are remembered, to reject them again locally until
         * their retry-after passes without calling Redis; 0 switches this off. Default
         * {@value #DEFAULT_LOCAL_REJECTIONS}.
         */
        public Builder localRejections(int maximumCallers) {
            settings.localRejections(maximumCallers);
            return this;
        }

        /**
         * The longest a remembered rejection is repeated without asking Redis, even when its
         * retry-after is longer; default 1 s. The copy cannot see the caller's state deleted,
         * evicted or lost in a failover, so this bounds how long it can be wrong. At least 1 ms.
         */
        public Builder localRejectionTtl(Duration ttl) {
            settings.localRejectionTtl(ttl);
            return this;
        }

        /**
         * From how many decisions a second of one caller on this instance its budget is decided
         * here in slices (see the class description); 0 switches slices off. Default
         * 500. Only single-limit token-bucket and GCRA decisions are
         * sliced; the fleet never admits more than the limit either way.
         */
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

        /** Decides on this clock instead of the Redis server's. For tests only; see {@link RedisStore#forTesting}. */
        public Builder timeSourceForTesting(TimeSource time) {
            settings.timeSourceForTesting(time);
            return this;
        }

        /** Builds the store. */
        public RedisStore build() {
            if (client == null) {
                throw new IllegalStateException("a RedisStore needs a client: call client(..) or connect(..)");
            }
            return new RedisStore(this, client);
        }
    }
}
