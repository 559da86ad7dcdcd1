package dev.sluice.benchmarks;

import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.codec.StringCodec;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The floor under every Redisson-based limiter: a minimal token bucket, one {@code EVALSHA} of
 * {@code floor-token-bucket.lua} per decision through Redisson's {@link RScript}, answering only
 * allowed or not. Whatever Sluice spends above this is the price of its features (all-or-nothing
 * multi-limit, full quota in the answer, monotonic stored time, NOSCRIPT fallback, timeouts and
 * failure modes); whatever a peer spends above it is overhead of its own.
 *
 * <p>Uses the same Redisson client settings as Sluice (retries off). Thread-safe.
 */
public final class FloorTokenBucket {

    static final String SCRIPT = load();

    private final RScript script;
    private final String sha;
    private final String rate;
    private final String capacity;
    private final String ttlMillis;

    /** A bucket of {@code capacity} tokens, refilled with {@code capacity} tokens every {@code period}. */
    public FloorTokenBucket(RedissonClient client, long capacity, Duration period) {
        this.script = client.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
        this.sha = script.scriptLoad(SCRIPT);
        this.rate = Double.toString(capacity * 1e9 / period.toNanos());
        this.capacity = Long.toString(capacity);
        // The time an empty bucket needs to fill: after it, an expired key equals a full bucket.
        this.ttlMillis = Long.toString(Math.max(1, period.toMillis()));
    }

    /** Takes one token from {@code key}'s bucket if it has one. */
    public boolean tryAcquire(String key) {
        Long allowed = script.evalSha(key, RScript.Mode.READ_WRITE, sha, RScript.ReturnType.LONG,
                List.of(key), rate, capacity, ttlMillis);
        return allowed == 1L;
    }

    /** As {@link #tryAcquire}, without blocking. */
    public CompletableFuture<Boolean> tryAcquireAsync(String key) {
        return script.<Long>evalShaAsync(key, RScript.Mode.READ_WRITE, sha, RScript.ReturnType.LONG,
                List.of(key), rate, capacity, ttlMillis).toCompletableFuture().thenApply(allowed -> allowed == 1L);
    }

    private static String load() {
        try (InputStream in = FloorTokenBucket.class.getResourceAsStream("floor-token-bucket.lua")) {
            if (in == null) {
                throw new IllegalStateException("floor-token-bucket.lua is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
