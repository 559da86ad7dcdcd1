package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.internal.Keys;
import dev.sluice.spi.RateLimitStore;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A Redis store's operations straight from Redis: each once the store is ready
 * ({@link RedisConnection#onceReady}), and each but a decision or a lease after any slice of the
 * caller's budget held here is given back ({@link #afterSlice}). Behind the local rejections,
 * which hand down the key they built; alone, it builds the key itself.
 */
final class DirectStore implements RejectionCache.Keyed {

    /** A deadline far enough away to never matter, for decisions without one. */
    private static final long NO_DEADLINE_NANOS = TimeUnit.HOURS.toNanos(1);

    private final RedisConnection connection;
    private final RedisCalls calls;
    private final Coalescer coalescer;
    private final LeaseScripts leases;
    /** Slices of hot callers' budgets, granted locally; {@code null} when switched off. */
    private final HotKeys hotKeys;

    DirectStore(RedisConnection connection, RedisCalls calls, Coalescer coalescer, LeaseScripts leases,
                HotKeys hotKeys) {
        this.connection = connection;
        this.calls = calls;
        this.coalescer = coalescer;
        this.leases = leases;
        this.hotKeys = hotKeys;
    }

    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
        return decide(StorageKey.of(caller, limits));
    }

    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits, long deadlineNanos, boolean fresh) {
        return decide(StorageKey.of(caller, limits), deadlineNanos, fresh);
    }

    @Override
    public CompletionStage<Decision> decide(StorageKey key) {
        return decide(key, System.nanoTime() + NO_DEADLINE_NANOS, false);
    }

    @Override
    public CompletionStage<Decision> decide(StorageKey key, long deadlineNanos, boolean fresh) {
        return connection.onceReady(() -> decideNow(key, deadlineNanos));
    }

    private CompletionStage<Decision> decideNow(StorageKey key, long deadlineNanos) {
        if (hotKeys != null) {
            CompletionStage<Decision> sliced = hotKeys.decide(key, deadlineNanos);
            if (sliced != null) {
                return sliced;
            }
        }
        return coalescer.decide(key, deadlineNanos);
    }

    @Override
    public CompletionStage<Void> reset(String caller, List<Limit> limits) {
        return reset(StorageKey.of(caller, limits));
    }

    @Override
    public CompletionStage<Void> reset(StorageKey key) {
        // the returned slots too: a reset caller's next reservation starts with nothing given back
        String[] keys = key.keysWithSlots().toArray(String[]::new);
        return afterSlice(key.tag, () -> calls.delete(keys));
    }

    @Override
    public CompletionStage<Void> refund(String caller, List<Limit> limits) {
        return refund(StorageKey.of(caller, limits));
    }

    @Override
    public CompletionStage<Void> refund(StorageKey key) {
        return connection.onceReady(() -> afterSlice(key.tag, () -> leases.refund(key)));
    }

    @Override
    public CompletionStage<Booking> book(String caller, List<Limit> limits, Duration maxWait) {
        return connection.onceReady(() -> {
            StorageKey key = StorageKey.of(caller, limits);
            return afterSlice(key.tag, () -> leases.book(key, maxWait));
        });
    }

    @Override
    public CompletionStage<Void> giveBack(String caller, List<Limit> limits, Booking booking) {
        return connection.onceReady(() -> {
            StorageKey key = StorageKey.of(caller, limits);
            return afterSlice(key.tag, () -> leases.giveBack(key, booking));
        });
    }

    @Override
    public CompletionStage<Void> pause(String caller, List<Limit> limits, Duration pause) {
        long micros = RateLimitStore.checkPause(pause);
        String tag = Keys.tag(caller);
        return connection.onceReady(() -> afterSlice(tag, () -> leases.pause(tag, limits, micros)));
    }

    @Override
    public CompletionStage<Decision> acquireLease(String caller, Limit limit, String leaseId) {
        return connection.onceReady(() -> leases.acquire(Keys.tag(caller), limit, leaseId));
    }

    @Override
    public CompletionStage<Void> releaseLease(String caller, Limit limit, String leaseId) {
        return leases.release(Keys.tag(caller), limit, leaseId);
    }

    @Override
    public CompletionStage<Map<String, String>> overrides() {
        return connection.onceReady(() -> calls.hashAll(RedisStore.OVERRIDES_KEY));
    }

    @Override
    public CompletionStage<Void> putOverride(String policy, String value) {
        return connection.onceReady(() -> calls.hashPut(RedisStore.OVERRIDES_KEY, policy, value));
    }

    /** {@code operation} once no slice of {@code tag}'s budget is held here (see {@link HotKeys}). */
    private <T> CompletionStage<T> afterSlice(String tag, Supplier<CompletionStage<T>> operation) {
        return hotKeys == null ? operation.get() : hotKeys.retire(tag).thenCompose(back -> operation.get());
    }

    @Override
    public void close() {
        // the connection is the store's to close
    }
}
