package dev.sluice.redis;

import dev.sluice.TimeSource;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * The settings {@link RedisStore.Builder} and {@link LettuceStore.Builder} share, with their
 * defaults and their validation: each public builder holds one and hands its shared setters
 * straight to it, so the two stores cannot drift apart in what they accept or how they refuse it.
 * The builders keep only what differs, how the client is made. Mutable, as a builder is; not
 * thread-safe.
 */
final class StoreSettings {

    private boolean owned;
    private long createdNanos;
    private TimeSource testTime;
    private boolean coalescing = true;
    private int localRejections = RedisStore.DEFAULT_LOCAL_REJECTIONS;
    private Duration localRejectionTtl = RedisStore.DEFAULT_LOCAL_REJECTION_TTL;
    private Duration startupWait = Duration.ofSeconds(2);
    private int hotKeyThreshold = HotKeys.DEFAULT_THRESHOLD;
    private boolean functions = true;

    /** The store made its client at {@code createdNanos} and shuts it down; the start-up wait counts from then. */
    void owned(long createdNanos) {
        this.createdNanos = createdNanos;
        this.owned = true;
    }

    /** The client is the application's: the start-up wait counts from building the store. */
    void borrowed() {
        this.owned = false;
    }

    /** Throws naming {@code 'startupWait'} if negative. */
    void startupWait(Duration wait) {
        Objects.requireNonNull(wait, "wait");
        if (wait.isNegative()) {
            throw new IllegalArgumentException("'startupWait' must not be negative, got '" + wait + "'");
        }
        this.startupWait = wait;
    }

    void coalescing(boolean coalescing) {
        this.coalescing = coalescing;
    }

    /** Throws naming {@code 'localRejections'} if negative. */
    void localRejections(int maximumCallers) {
        this.localRejections = notNegative("localRejections", maximumCallers);
    }

    void localRejectionTtl(Duration ttl) {
        this.localRejectionTtl = RejectionCache.checkTtl(ttl);
    }

    /** Throws naming {@code 'hotKeyThreshold'} if negative. */
    void hotKeyThreshold(int decisionsPerSecond) {
        this.hotKeyThreshold = notNegative("hotKeyThreshold", decisionsPerSecond);
    }

    void functions(boolean functions) {
        this.functions = functions;
    }

    void timeSourceForTesting(TimeSource time) {
        this.testTime = Objects.requireNonNull(time, "time");
    }

    private static int notNegative(String setting, int value) {
        if (value < 0) {
            throw new IllegalArgumentException("'" + setting + "' must not be negative, got '" + value + "'");
        }
        return value;
    }

    /**
     * What the store is composed from: these settings on {@code calls}.
     *
     * @param clusterCalls how a call's batches reach a cluster's masters, or {@code null}: each
     *                     batch its own script call
     */
    ScriptStore.Settings on(RedisCalls calls, Function<DecideScript, Coalescer.Calls> clusterCalls) {
        return new ScriptStore.Settings(calls, owned, createdNanos, clusterCalls, testTime, coalescing,
                localRejections, localRejectionTtl, startupWait, hotKeyThreshold, functions);
    }
}
