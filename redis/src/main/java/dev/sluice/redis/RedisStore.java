package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.TimeSource;
import dev.sluice.internal.Keys;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
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
 * <p>Made of a {@link RedisConnection} (the client), a {@link DecideScript} (the script's
 * protocol), a {@link Coalescer} (the decisions waiting while a call is in flight, of one caller
 * or many, in the next call), {@link ClusterCalls} on a cluster (a call's callers in one pipeline),
 * {@link HotKeys} (slices of a hot caller's budget, taken from Redis in one call and granted here),
 * a {@link DirectStore} (each operation once the store is ready) and, in front, a
 * {@link RejectionCache} (recent rejections repeated locally).
 *
 * <p>A caller this instance decides at least {@link Builder#hotKeyThreshold} times a second (a
 * {@code key=global} cap, a hot client), under one token-bucket or GCRA limit, is decided here from
 * slices of its budget taken from Redis; what a slice has left is given back when it expires and on
 * {@link #close()}. The fleet never admits more than the limit; a slice can only hold budget back
 * from other instances, for at most its lifetime (1 s at most).
 */
public final class RedisStore implements RateLimitStore {

    /** The default bound on callers whose rejection is remembered locally. */
    public static final int DEFAULT_LOCAL_REJECTIONS = 10_000;
    /** The default longest time a rejection is repeated locally without asking Redis. */
    public static final Duration DEFAULT_LOCAL_REJECTION_TTL = Duration.ofSeconds(1);
    /** Script calls in flight to one Redis master before decisions wait to go together in the next. */
    private static final int MASTER_SLOTS = 1;
    /** Pipelines in flight to a cluster before decisions wait to go together in the next. */
    private static final int CLUSTER_SLOTS = 2;

    /** The hash of the limit overrides, one field per policy; see {@link #overrides()}. */
    public static final String OVERRIDES_KEY = "sluice:overrides";

    /** Connections opened at start-up per master: a burst's requests that cannot wait each need one. */
    static final int WARM_CONNECTIONS = 16;

    private final RedissonClient client;
    private final DecideScript script;
    private final RedisConnection connection;
    private final Coalescer coalescer;
    /** Refunds and concurrency leases: scripts of their own beside decide.lua. */
    private final LeaseScripts leases;
    /** Slices of hot callers' budgets, granted locally; {@code null} when switched off. */
    private final HotKeys hotKeys;
    /** Every operation straight from Redis. */
    private final DirectStore direct;
    /** Where decisions, refunds and resets go: the local rejections in front of {@link #direct}, or it alone. */
    private final RateLimitStore front;

    private RedisStore(Builder builder) {
        this.script = new DecideScript(builder.client, builder.testTime);
        // One script decides the batches of a call where all keys live on one master (a single server,
        // a Sentinel's master); a cluster's keys spread over nodes, so there each batch is one script
        // call and a call's batches go out in one pipeline.
        boolean cluster = builder.client.getConfig().isClusterConfig();
        Coalescer.Calls calls = cluster ? new ClusterCalls(builder.client, script)::decide : script::decide;
        this.coalescer = new Coalescer(calls, cluster ? CLUSTER_SLOTS : MASTER_SLOTS, builder.coalescing,
                cluster ? Coalescer.LATE_NANOS : Coalescer.NEVER_LATE);
        this.leases = new LeaseScripts(builder.client, builder.testTime);
        this.hotKeys = builder.hotKeyThreshold == 0 ? null : new HotKeys(builder.client, builder.hotKeyThreshold,
                builder.testTime, coalescer::decide);
        this.client = builder.client;
        long deadline = (builder.owned ? builder.createdNanos : System.nanoTime()) + builder.startupWait.toNanos();
        this.connection = new RedisConnection(builder.client, builder.owned, this::getReady, this::fillIn,
                builder.startupWait, deadline);
        this.direct = new DirectStore(connection, coalescer, leases, hotKeys);
        if (builder.localRejections == 0) {
            this.front = direct;
        } else if (builder.testTime == null) {
            this.front = new RejectionCache(direct, builder.localRejections, builder.localRejectionTtl);
        } else {
            this.front = new RejectionCache(direct, builder.localRejections, builder.localRejectionTtl,
                    builder.testTime);
        }
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

    /**
     * Gets ready to decide, on the connection's thread at start-up: loads every script on every
     * master (which, on a cluster, learns its slots first, and opens a connection to each). The
     * time that takes is counted as a call's round trip, an overestimate (it includes connecting),
     * so that the first requests, judged by it, go at once rather than wait for each other.
     * Throws while Redis cannot be reached.
     */
    private void getReady() {
        long sent = System.nanoTime();
        List<CompletableFuture<?>> loading = new ArrayList<>(3);
        loading.add(script.loadEverywhere());
        loading.add(leases.loadEverywhere());
        if (hotKeys != null) {
            loading.add(hotKeys.loadEverywhere());
        }
        CompletableFuture.allOf(loading.toArray(CompletableFuture[]::new)).join();
        coalescer.learnRoundTrip(System.nanoTime() - sent);
    }

    /**
     * Fills the pool in behind readiness, while requests are decided: {@link #WARM_CONNECTIONS}
     * calls at once open as many connections to each node; then as many round trips of decide.lua
     * deciding nothing are measured, at once, each on another slot (so, on a cluster, spread over
     * the masters), and counted as calls'. A round trip that fails is not counted.
     */
    private void fillIn() {
        List<CompletableFuture<?>> opening = new ArrayList<>(WARM_CONNECTIONS);
        for (int i = 0; i < WARM_CONNECTIONS; i++) {
            opening.add(client.getScript(StringCodec.INSTANCE).scriptExistsAsync(new String[] {DecideScript.SHA})
                    .toCompletableFuture());
        }
        CompletableFuture.allOf(opening.toArray(CompletableFuture[]::new)).join();
        List<CompletableFuture<Long>> roundTrips = new ArrayList<>(WARM_CONNECTIONS);
        for (int i = 0; i < WARM_CONNECTIONS; i++) {
            long sent = System.nanoTime();
            roundTrips.add(script.nothing(Keys.key(Keys.tag("warm-up-" + i), "warm-up", "tb"))
                    .thenApply(reply -> System.nanoTime() - sent));
        }
        for (CompletableFuture<Long> roundTrip : roundTrips) {
            try {
                coalescer.learnRoundTrip(roundTrip.join());
            } catch (RuntimeException e) {
                // not counted: the first decisions are judged by the round trips that were
            }
        }
    }

    /** Decides one request without a deadline; see {@link #decide(String, List, long, boolean)}. */
    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
        return front.decide(caller, limits);
    }

    /**
     * Decides one request.
     *
     * <p>A caller rejected recently (with the same limits and cost) is rejected again locally,
     * without a round trip, until its retry-after has passed or for at most
     * {@link Builder#localRejectionTtl(Duration) localRejectionTtl} (1 s by default), whichever
     * comes first: the copy may be out of date (the state was deleted, evicted or lost in a
     * failover), so it is trusted only briefly. A {@code fresh} request skips the copy.
     *
     * <p>Concurrent requests in this JVM, of one caller or many, share script calls, each getting
     * its own exact decision; a request waits for a call in flight only while it can still be
     * answered by {@code deadlineNanos} ({@link Coalescer} tells how).
     */
    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits, long deadlineNanos, boolean fresh) {
        return front.decide(caller, limits, deadlineNanos, fresh);
    }

    /**
     * Deletes the caller's keys of these limits in one {@code DEL} (they share a hash tag, so one
     * slot), and forgets the caller's local rejections, before and after, so that a rejection
     * decided meanwhile is not repeated.
     */
    @Override
    public CompletionStage<Void> reset(String caller, List<Limit> limits) {
        return front.reset(caller, limits);
    }

    /**
     * Gives back one allowed request's spending in one {@code refund.lua} call (see
     * {@link RateLimitStore#refund}), and forgets the caller's local rejections.
     */
    @Override
    public CompletionStage<Void> refund(String caller, List<Limit> limits) {
        return front.refund(caller, limits);
    }

    /**
     * Reserves one request in one call of {@code decide.lua} (its reservation form): never from
     * the local rejections, which only a decision reads; see {@link RateLimitStore#reserve}.
     */
    @Override
    public CompletionStage<Decision> reserve(String caller, List<Limit> limits, Duration maxWait) {
        return book(caller, limits, maxWait).thenApply(Booking::decision);
    }

    /** Reserves as {@link #reserve} does, in the same one call, telling where each limit's schedule ends. */
    @Override
    public CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
        return direct.book(caller, limits, maxWait);
    }

    /**
     * Returns a reservation its waiter gave up in one call of {@code giveback.lua}, after giving
     * back any slice held here; see {@link RateLimitStore#giveBack}. The local rejections may
     * repeat a refusal for at most their time to live after it, as after a refund of another JVM.
     */
    @Override
    public CompletionStage<Void> giveBack(String caller, List<Limit> limits, Booking booking) {
        return direct.giveBack(caller, limits, booking);
    }

    /**
     * Pauses the caller in one call of {@code pause.lua}, after giving back any slice held here;
     * see {@link RateLimitStore#pause}.
     */
    @Override
    public CompletionStage<Void> pause(String caller, List<Limit> limits, Duration pause) {
        return direct.pause(caller, limits, pause);
    }

    /**
     * Takes a concurrency lease in one {@code lease.lua} call: a sorted set of lease ids scored by
     * their expiry on the Redis server's clock, trimmed on every call, its TTL the last expiry.
     */
    @Override
    public CompletionStage<Decision> acquireLease(String caller, Limit limit, String leaseId) {
        return direct.acquireLease(caller, limit, leaseId);
    }

    /** Returns a concurrency lease: one {@code ZREM}. */
    @Override
    public CompletionStage<Void> releaseLease(String caller, Limit limit, String leaseId) {
        return direct.releaseLease(caller, limit, leaseId);
    }

    /**
     * The overrides of every application on this Redis database: one {@code HGETALL} of the hash
     * {@value #OVERRIDES_KEY}. That hash is the one key Sluice writes without a TTL: an override
     * must hold until an operator clears it, across restarts of every instance, and the hash
     * cannot grow past one field per policy.
     */
    @Override
    public CompletionStage<java.util.Map<String, String>> overrides() {
        return direct.overrides();
    }

    /** Writes ({@code HSET}) or clears ({@code HDEL}) one field of the overrides hash. */
    @Override
    public CompletionStage<Void> putOverride(String policy, String value) {
        return direct.putOverride(policy, value);
    }

    /**
     * Whether the store is ready (see above): Redis has answered and holds the scripts, or the
     * client is the application's, whose store decides anyway.
     */
    public boolean ready() {
        return connection.ready();
    }

    /**
     * {@code null} once the store is ready. Before, a stage completed the moment it is; or
     * exceptionally, and the limiter's failure mode applies: at once while Redis is unreachable
     * (see the class description; the store keeps trying every 500 ms), when it is found so, or
     * when neither happened within the larger of {@code atLeast} (the limiter's timeout) and the
     * {@linkplain Builder#startupWait start-up wait} from this call.
     */
    @Override
    public CompletionStage<Void> whenReady(Duration atLeast) {
        return connection.whenReady(atLeast);
    }

    /** How many callers have a coalesced script call in flight (for tests: none stays behind). */
    int requestsInFlight() {
        return coalescer.inFlight();
    }

    /** The Redisson client this store sends its scripts through. */
    public RedissonClient client() {
        return connection.client();
    }

    /** How many callers hold a slice of their budget (for tests). */
    int hotKeySlices() {
        return hotKeys == null ? 0 : hotKeys.slices();
    }

    /**
     * Gives back what the hot callers' slices hold (waiting up to 2 s for Redis), then shuts the
     * client down if this store created it; a borrowed client is left alone.
     */
    @Override
    public void close() {
        if (hotKeys != null) {
            hotKeys.close();
        }
        connection.close();
    }

    /** Settings of a {@link RedisStore}. */
    public static final class Builder {
        private RedissonClient client;
        private boolean owned;
        private TimeSource testTime;
        private boolean coalescing = true;
        private int localRejections = DEFAULT_LOCAL_REJECTIONS;
        private Duration localRejectionTtl = DEFAULT_LOCAL_REJECTION_TTL;
        private Duration startupWait = Duration.ofSeconds(2);
        private int hotKeyThreshold = HotKeys.DEFAULT_THRESHOLD;
        private long createdNanos;

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
            Objects.requireNonNull(wait, "wait");
            if (wait.isNegative()) {
                throw new IllegalArgumentException("'startupWait' must not be negative, got '" + wait + "'");
            }
            this.startupWait = wait;
            return this;
        }

        /** Uses a client the application owns and closes. */
        public Builder client(RedissonClient client) {
            this.client = Objects.requireNonNull(client, "client");
            this.owned = false;
            return this;
        }

        /** Creates and owns a client from a {@code store} value; see {@link RedisStore#connect}. */
        public Builder connect(String store) {
            this.createdNanos = System.nanoTime();
            this.client = RedisConnection.createOffThread(config(store));
            this.owned = true;
            return this;
        }

        /** Whether concurrent requests (of one caller, and of different callers) share script calls; default on. */
        public Builder coalescing(boolean coalescing) {
            this.coalescing = coalescing;
            return this;
        }

        /**
         * How many callers' recent rejections are remembered, to reject them again locally until
         * their retry-after passes without calling Redis; 0 switches this off. Default
         * {@value #DEFAULT_LOCAL_REJECTIONS}.
         */
        public Builder localRejections(int maximumCallers) {
            if (maximumCallers < 0) {
                throw new IllegalArgumentException("'localRejections' must not be negative, got '"
                        + maximumCallers + "'");
            }
            this.localRejections = maximumCallers;
            return this;
        }

        /**
         * The longest a remembered rejection is repeated without asking Redis, even when its
         * retry-after is longer; default 1 s. The copy cannot see the caller's state deleted,
         * evicted or lost in a failover, so this bounds how long it can be wrong. At least 1 ms.
         */
        public Builder localRejectionTtl(Duration ttl) {
            this.localRejectionTtl = RejectionCache.checkTtl(ttl);
            return this;
        }

        /**
         * From how many decisions a second of one caller on this instance its budget is decided
         * here in slices (see the class description); 0 switches slices off. Default
         * 500. Only single-limit token-bucket and GCRA decisions are
         * sliced; the fleet never admits more than the limit either way.
         */
        public Builder hotKeyThreshold(int decisionsPerSecond) {
            if (decisionsPerSecond < 0) {
                throw new IllegalArgumentException("'hotKeyThreshold' must not be negative, got '"
                        + decisionsPerSecond + "'");
            }
            this.hotKeyThreshold = decisionsPerSecond;
            return this;
        }

        /** Decides on this clock instead of the Redis server's. For tests only; see {@link RedisStore#forTesting}. */
        public Builder timeSourceForTesting(TimeSource time) {
            this.testTime = Objects.requireNonNull(time, "time");
            return this;
        }

        /** Builds the store. */
        public RedisStore build() {
            if (client == null) {
                throw new IllegalStateException("a RedisStore needs a client: call client(..) or connect(..)");
            }
            return new RedisStore(this);
        }
    }
}
