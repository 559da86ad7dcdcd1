package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.internal.Keys;
import dev.sluice.spi.RateLimitStore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * A Redis store whichever client carries its calls ({@link RedisCalls}): the one composition of
 * the parts behind {@link RedisStore} (Redisson) and {@link LettuceStore} (Lettuce), which differ
 * only in how their client is made and what their builders offer.
 *
 * <p>Made of a {@link RedisConnection} (readiness), a {@link DecideScript} (the script's
 * protocol), a {@link Coalescer} (the decisions waiting while a call is in flight, of one caller
 * or many, in the next call), on a cluster a client's way of sending a call's batches to their
 * masters, {@link HotKeys} (slices of a hot caller's budget, taken from Redis in one call and
 * granted here), a {@link DirectStore} (each operation once the store is ready) and, in front, a
 * {@link RejectionCache} (recent rejections repeated locally).
 */
abstract class ScriptStore implements RateLimitStore {

    /** Script calls in flight to one Redis master before decisions wait to go together in the next. */
    private static final int MASTER_SLOTS = 1;
    /** Calls in flight to a cluster before decisions wait to go together in the next. */
    private static final int CLUSTER_SLOTS = 2;
    /** Connections opened at start-up per master: a burst's requests that cannot wait each need one. */
    static final int WARM_CONNECTIONS = 16;

    /**
     * The settings both builders share.
     *
     * @param calls        the client, behind the seam
     * @param owned        whether the store made the client (and shuts it down)
     * @param createdNanos when an owned client was made: the start-up wait counts from there
     * @param clusterCalls how a call's batches reach a cluster's masters; {@code null}: each batch
     *                     its own script call, all written at once
     * @param testTime     the clock instead of the Redis server's, or {@code null}
     * @param functions    whether decide.lua goes as a function ({@code FCALL}) where Redis has them
     */
    record Settings(RedisCalls calls, boolean owned, long createdNanos,
                    Function<DecideScript, Coalescer.Calls> clusterCalls, TimeSource testTime, boolean coalescing,
                    int localRejections, Duration localRejectionTtl, Duration startupWait, int hotKeyThreshold,
                    boolean functions) {
    }

    private final RedisCalls calls;
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

    ScriptStore(Settings settings) {
        this.calls = settings.calls();
        this.script = new DecideScript(calls, settings.testTime(), settings.functions());
        // One script decides the batches of a call where all keys live on one master (a single server,
        // a Sentinel's master); a cluster's keys spread over nodes, so there each batch is one script
        // call, sent as the client best reaches the masters.
        boolean cluster = calls.cluster();
        Coalescer.Calls sending;
        if (!cluster) {
            sending = script::decide;
        } else if (settings.clusterCalls() != null) {
            sending = settings.clusterCalls().apply(script);
        } else {
            sending = batches -> {
                List<CompletableFuture<java.util.function.IntFunction<Decision>>> answers =
                        new ArrayList<>(batches.size());
                for (Batch batch : batches) {
                    answers.add(script.decide(List.of(batch)).get(0));
                }
                return answers;
            };
        }
        this.coalescer = new Coalescer(sending, cluster ? CLUSTER_SLOTS : MASTER_SLOTS, settings.coalescing(),
                cluster ? Coalescer.LATE_NANOS : Coalescer.NEVER_LATE);
        this.leases = new LeaseScripts(calls, settings.testTime());
        this.hotKeys = settings.hotKeyThreshold() == 0 ? null : new HotKeys(calls, settings.hotKeyThreshold(),
                settings.testTime(), coalescer::decide);
        long deadline = (settings.owned() ? settings.createdNanos() : System.nanoTime())
                + settings.startupWait().toNanos();
        this.connection = new RedisConnection(getClass(), calls, settings.owned(), this::getReady, this::fillIn,
                settings.startupWait(), deadline);
        this.direct = new DirectStore(connection, calls, coalescer, leases, hotKeys);
        if (settings.localRejections() == 0) {
            this.front = direct;
        } else if (settings.testTime() == null) {
            this.front = new RejectionCache(direct, settings.localRejections(), settings.localRejectionTtl());
        } else {
            this.front = new RejectionCache(direct, settings.localRejections(), settings.localRejectionTtl(),
                    settings.testTime());
        }
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
     * calls at once open as many connections to each node (a client of one connection per node
     * just sends them); then as many round trips of decide.lua deciding nothing are measured, at
     * once, each on another slot (so, on a cluster, spread over the masters), and counted as
     * calls'. A round trip that fails is not counted.
     */
    private void fillIn() {
        List<CompletableFuture<?>> opening = new ArrayList<>(WARM_CONNECTIONS);
        for (int i = 0; i < WARM_CONNECTIONS; i++) {
            opening.add(calls.touch(DecideScript.SHA));
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
     * without a round trip, until its retry-after has passed or for at most the local rejections'
     * time to live (1 s by default), whichever comes first: the copy may be out of date (the state
     * was deleted, evicted or lost in a failover), so it is trusted only briefly. A {@code fresh}
     * request skips the copy.
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
     * Reserves one request in one call of {@code reserve.lua}: never from the local rejections,
     * which only a decision reads; see {@link RateLimitStore#reserve}.
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
     * {@code sluice:overrides}. That hash is the one key Sluice writes without a TTL: an override
     * must hold until an operator clears it, across restarts of every instance, and the hash
     * cannot grow past one field per policy.
     */
    @Override
    public CompletionStage<Map<String, String>> overrides() {
        return direct.overrides();
    }

    /** Writes ({@code HSET}) or clears ({@code HDEL}) one field of the overrides hash. */
    @Override
    public CompletionStage<Void> putOverride(String policy, String value) {
        return direct.putOverride(policy, value);
    }

    /**
     * Whether the store is ready: Redis has answered and holds the scripts, or the client is the
     * application's, whose store decides anyway.
     */
    public boolean ready() {
        return connection.ready();
    }

    /**
     * {@code null} once the store is ready. Before, a stage completed the moment it is; or
     * exceptionally, and the limiter's failure mode applies: at once while Redis is unreachable
     * (the store keeps trying every 500 ms), when it is found so, or when neither happened within
     * the larger of {@code atLeast} (the limiter's timeout) and the start-up wait from this call.
     */
    @Override
    public CompletionStage<Void> whenReady(Duration atLeast) {
        return connection.whenReady(atLeast);
    }

    /** How many callers have a coalesced script call in flight (for tests: none stays behind). */
    int requestsInFlight() {
        return coalescer.inFlight();
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
}
