package dev.sluice.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

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
 * made by {@link #of} leaves the client to its owner. A store made by {@link #connect} connects on
 * a thread of its own, waiting up to two seconds for it: an application whose Redis is down still
 * starts, and its decisions follow the failure mode, at once, until Redis answers.
 * Thread-safe.
 */
public final class RedisStore implements RateLimitStore {

    private static final Logger LOG = LoggerFactory.getLogger(RedisStore.class);
    static final String SCRIPT = loadScript();
    static final String SHA = sha1(SCRIPT);
    private static final int ARGS_PER_LIMIT = 7;
    /** Values decide.lua returns per limit: fits, remaining, reset_us, retry_us, next_us. */
    private static final int VALUES_PER_LIMIT = 5;
    /** The most requests one coalesced script call decides. */
    static final int MAX_BATCH = 256;
    /** The default bound on callers whose rejection is remembered locally. */
    public static final int DEFAULT_LOCAL_REJECTIONS = 10_000;
    /** The default longest time a rejection is repeated locally without asking Redis. */
    public static final Duration DEFAULT_LOCAL_REJECTION_TTL = Duration.ofSeconds(1);
    /** A deadline far enough away to never matter, for decisions without one. */
    private static final long NO_DEADLINE_NANOS = TimeUnit.HOURS.toNanos(1);
    /** The highest database index of a Redis server with its default {@code databases 16}. */
    private static final int MAX_DATABASE = 15;

    private final RedissonClient client;
    private final boolean owned;
    private final RScript script;
    private final TimeSource testTime;
    private final boolean coalescing;
    private final ConcurrentHashMap<RequestKey, Batch> inFlight = new ConcurrentHashMap<>();
    private final Cache<RequestKey, Rejection> rejections;
    private final ConcurrentHashMap<List<Limit>, String[]> encoded = new ConcurrentHashMap<>();
    private final long localRejectionTtlMicros;
    private final AtomicBoolean connecting = new AtomicBoolean();
    private final RoundTrips roundTrips = new RoundTrips();
    private volatile boolean ready;
    private volatile boolean closed;

    private RedisStore(Builder builder) {
        this.client = builder.client;
        this.owned = builder.owned;
        this.testTime = builder.testTime;
        this.coalescing = builder.coalescing;
        this.localRejectionTtlMicros = micros(builder.localRejectionTtl);
        this.script = client.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0));
        if (owned) {
            // Our client connects lazily, and Redisson makes the first connection on the calling
            // thread: a request must never pay for that (or wait out a connect timeout). Connect and
            // preload the script on a thread of our own; wait for it briefly, so that a store whose
            // Redis is up is ready at once; until it is, decisions fail fast (the failure mode).
            connectInBackground();
            awaitReady(builder.startupWait);
        } else {
            ready = true; // the application's client: connected (or connecting) as it chose
        }
        this.rejections = builder.localRejections == 0 ? null : Caffeine.newBuilder()
                .maximumSize(builder.localRejections)
                .ticker(() -> clockMicros() * 1_000)
                .expireAfter(Expiry.creating((RequestKey key, Rejection r) -> Duration.of(r.untilMicros - r.decidedAtMicros,
                        ChronoUnit.MICROS)))
                .build();
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
            int port = uri.getPort() < 0 ? 6379 : uri.getPort();
            if (port < 1 || port > 65_535) {
                throw new IllegalArgumentException("'store' has port " + port + ", outside 1 to 65535, got '" + store + "'");
            }
            config = new Config();
            var single = config.useSingleServer()
                    .setAddress(uri.getScheme() + "://" + uri.getHost() + ":" + port)
                    .setDatabase(database(uri, store))
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

    /** The database of a {@code redis://} URI's path: none, {@code /} or {@code /0} to {@code /15}. */
    private static int database(URI uri, String store) {
        String path = uri.getPath() == null ? "" : uri.getPath();
        if (path.isEmpty() || path.equals("/")) {
            return 0;
        }
        String digits = path.substring(1);
        if (!digits.matches("[0-9]{1,2}") || Integer.parseInt(digits) > MAX_DATABASE) {
            throw new IllegalArgumentException("'store' names database '" + digits + "'; Redis numbers them 0 to "
                    + MAX_DATABASE + " (use a redisson: YAML file for a server configured with more), got '" + store + "'");
        }
        return Integer.parseInt(digits);
    }

    /** Decides one request without a deadline; see {@link #decide(String, List, long, boolean)}. */
    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits) {
        return decide(caller, limits, System.nanoTime() + NO_DEADLINE_NANOS, false);
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
     * <p>Concurrent requests of one caller in this JVM are coalesced: while one script call is in
     * flight, the requests that arrive wait and are then decided together in one call, in arrival
     * order, each getting its own exact decision. A request waits only while the call in flight
     * and then its own can both come back before {@code deadlineNanos}, judged by the recent round
     * trips; otherwise it is sent at once, beside the call in flight, and the requests after it
     * wait for it instead. A slow Redis thus decides a hot caller's requests as a quiet caller's.
     */
    @Override
    public CompletionStage<Decision> decide(String caller, List<Limit> limits, long deadlineNanos, boolean fresh) {
        if (!ready) {
            connectInBackground();
            return CompletableFuture.failedFuture(new IllegalStateException("not connected to Redis yet"));
        }
        RequestKey key = new RequestKey(Keys.tag(caller), limits);
        if (rejections != null && !fresh) {
            Decision cached = cachedRejection(key);
            if (cached != null) {
                return CompletableFuture.completedFuture(cached);
            }
        }
        CompletableFuture<Decision> answer = new CompletableFuture<>();
        if (!coalescing) {
            send(key, List.of(answer), null);
            return answer;
        }
        while (true) {
            Batch current = inFlight.get(key);
            if (current == null) {
                Batch mine = new Batch();
                if (inFlight.putIfAbsent(key, mine) == null) {
                    send(key, List.of(answer), mine);
                    return answer;
                }
                continue;
            }
            synchronized (current) {
                if (current.closed) {
                    continue;
                }
                if (current.answersInTime(deadlineNanos, roundTrips.likelyNanos())) {
                    current.waiting.add(answer);
                    return answer;
                }
            }
            // Waiting would miss the deadline: go now, and be the call that later arrivals wait for.
            Batch mine = new Batch();
            if (inFlight.replace(key, current, mine)) {
                send(key, List.of(answer), mine);
                return answer;
            }
        }
    }

    /**
     * Deletes the caller's keys of these limits in one {@code DEL} (they share a hash tag, so one
     * slot), and forgets the caller's local rejections, before and after, so that a rejection
     * decided meanwhile is not repeated.
     */
    @Override
    public CompletionStage<Void> reset(String caller, List<Limit> limits) {
        String tag = Keys.tag(caller);
        forgetRejections(tag);
        String[] keys = new String[limits.size()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = Keys.key(tag, limits.get(i).policy(), limits.get(i).algorithm().keySuffix());
        }
        return client.getKeys().deleteAsync(keys).toCompletableFuture().thenRun(() -> forgetRejections(tag));
    }

    private void forgetRejections(String tag) {
        if (rejections != null) {
            rejections.asMap().keySet().removeIf(key -> key.tag.equals(tag));
        }
    }

    /** Starts connecting (and loading the script) on a daemon thread, unless already ready or trying. */
    private void connectInBackground() {
        if (ready || closed || !connecting.compareAndSet(false, true)) {
            return;
        }
        Thread connector = new Thread(() -> {
            try {
                while (!ready && !closed) {
                    try {
                        script.scriptLoad(SCRIPT);
                        ready = true;
                    } catch (RuntimeException e) {
                        LOG.debug("Redis is not reachable yet; retrying in 500 ms: {}", e.toString());
                        Thread.sleep(500);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                connecting.set(false);
            }
        }, "sluice-redis-connect");
        connector.setDaemon(true);
        connector.start();
    }

    private void awaitReady(Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (!ready && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Whether the store has connected to Redis at least once (decisions before that fail fast). */
    public boolean ready() {
        return ready;
    }

    /** One caller's requests with one set of limits: the unit of coalescing and of the local cache. */
    private static final class RequestKey {
        final String tag;
        final List<Limit> limits;
        // Looked up in two maps per decision; the limits' hash is worth computing once.
        private final int hash;

        RequestKey(String tag, List<Limit> limits) {
            this.tag = tag;
            this.limits = limits;
            this.hash = 31 * tag.hashCode() + limits.hashCode();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof RequestKey key && hash == key.hash && tag.equals(key.tag) && limits.equals(key.limits);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /**
     * How long a script call takes, as TCP estimates a round trip (RFC 6298): a smoothed mean
     * plus four mean deviations, so that a wait judged to fit does fit despite the usual jitter.
     */
    private static final class RoundTrips {
        private long smoothed;
        private long deviation;
        private volatile long likely;

        synchronized void add(long nanos) {
            if (likely == 0) {
                smoothed = nanos;
                deviation = nanos / 2;
            } else {
                deviation += (Math.abs(smoothed - nanos) - deviation) / 4;
                smoothed += (nanos - smoothed) / 8;
            }
            likely = smoothed + 4 * deviation;
        }

        long likelyNanos() {
            return likely;
        }
    }

    /** The requests waiting while a script call for their key is in flight. Guarded by itself. */
    private static final class Batch {
        final List<CompletableFuture<Decision>> waiting = new ArrayList<>();
        boolean closed;
        /** When the call in flight was sent. */
        long sentNanos = System.nanoTime();

        /** Whether a request waiting for the call in flight, then sent, would be answered by its deadline. */
        boolean answersInTime(long deadlineNanos, long latencyNanos) {
            long inFlightAnswered = Math.max(System.nanoTime(), sentNanos + latencyNanos);
            return deadlineNanos - (inFlightAnswered + latencyNanos) >= 0;
        }
    }

    /** A rejection remembered until its retry-after, in {@link #clockMicros()} time. */
    private record Rejection(Decision decision, long decidedAtMicros, long untilMicros) {
    }

    private void send(RequestKey key, List<CompletableFuture<Decision>> answers, Batch batch) {
        // A caller that gave up (its limiter timed out) before its turn is not charged.
        List<CompletableFuture<Decision>> live = new ArrayList<>(answers.size());
        for (CompletableFuture<Decision> answer : answers) {
            if (!answer.isDone()) {
                live.add(answer);
            }
        }
        if (live.isEmpty()) {
            next(key, batch);
            return;
        }
        long sentAt = clockMicros();
        long sentNanos = System.nanoTime();
        if (batch != null) {
            synchronized (batch) {
                batch.sentNanos = sentNanos;
            }
        }
        int width = replyWidth(key.limits.size());
        CompletableFuture<List<Object>> reply;
        try {
            reply = call(key, live.size());
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        // Nothing in here may leave an answer incomplete or the batch registered: every waiting
        // request gets a decision or a failure, and the next turn always runs.
        reply.whenComplete((values, failure) -> {
            try {
                roundTrips.add(System.nanoTime() - sentNanos);
                for (int r = 0; r < live.size(); r++) {
                    CompletableFuture<Decision> answer = live.get(r);
                    try {
                        if (failure != null) {
                            answer.completeExceptionally(unwrap(failure));
                        } else {
                            Decision decision = toDecision(values, r * width, key.limits);
                            remember(key, decision, sentAt);
                            answer.complete(decision);
                        }
                    } catch (RuntimeException e) {
                        answer.completeExceptionally(new IllegalStateException("unreadable reply from decide.lua: " + e, e));
                    }
                }
            } finally {
                next(key, batch);
            }
        });
    }

    private void next(RequestKey key, Batch batch) {
        if (batch == null) {
            return;
        }
        List<CompletableFuture<Decision>> turn;
        synchronized (batch) {
            if (batch.waiting.isEmpty()) {
                batch.closed = true;
                inFlight.remove(key, batch);
                return;
            }
            int n = Math.min(MAX_BATCH, batch.waiting.size());
            turn = new ArrayList<>(batch.waiting.subList(0, n));
            batch.waiting.subList(0, n).clear();
        }
        send(key, turn, batch);
    }

    private CompletableFuture<List<Object>> call(RequestKey key, int requests) {
        List<Limit> limits = key.limits;
        List<Object> keys = new ArrayList<>(limits.size());
        for (Limit limit : limits) {
            keys.add(Keys.key(key.tag, limit.policy(), limit.algorithm().keySuffix()));
        }
        String[] limitArgs = encode(limits);
        Object[] args = new Object[2 + limitArgs.length];
        args[0] = testTime == null ? "" : Long.toString(testTime.nowMicros());
        args[1] = Integer.toString(requests);
        System.arraycopy(limitArgs, 0, args, 2, limitArgs.length);
        String route = (String) keys.get(0);
        return script.<List<Object>>evalShaAsync(route, RScript.Mode.READ_WRITE, SHA, RScript.ReturnType.LIST, keys, args)
                .toCompletableFuture()
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
                .thenCompose(stage -> stage);
    }

    /** The script arguments of a set of limits, encoded once per distinct set. */
    private String[] encode(List<Limit> limits) {
        String[] args = encoded.get(limits);
        if (args != null) {
            return args;
        }
        args = new String[ARGS_PER_LIMIT * limits.size()];
        for (int i = 0; i < limits.size(); i++) {
            Limit limit = limits.get(i);
            int base = ARGS_PER_LIMIT * i;
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
        if (encoded.size() < 1_024) {
            encoded.put(List.copyOf(limits), args);
        }
        return args;
    }

    private void remember(RequestKey key, Decision decision, long sentAtMicros) {
        if (rejections != null && decision.outcome() == Decision.Outcome.REJECTED && !decision.retryAfter().isZero()) {
            long retry = Math.min(micros(decision.retryAfter()), localRejectionTtlMicros);
            // Counted from when the call was sent, before Redis decided: the local wait never
            // outlasts Redis's, and never the bound on how long a copy is trusted.
            rejections.put(key, new Rejection(decision, sentAtMicros, sentAtMicros + retry));
        }
    }

    private Decision cachedRejection(RequestKey key) {
        Rejection rejection = rejections.getIfPresent(key);
        if (rejection == null) {
            return null;
        }
        long now = clockMicros();
        if (now >= rejection.untilMicros) {
            return null;
        }
        long elapsed = Math.max(0, now - rejection.decidedAtMicros);
        Decision original = rejection.decision;
        List<Decision.Quota> quotas = new ArrayList<>(original.quotas().size());
        for (Decision.Quota quota : original.quotas()) {
            quotas.add(new Decision.Quota(quota.limit(), quota.allowed(), quota.remaining(),
                    minus(quota.reset(), elapsed), minus(quota.retryAfter(), elapsed), minus(quota.nextUnit(), elapsed)));
        }
        return new Decision(Decision.Outcome.REJECTED, quotas, minus(original.retryAfter(), elapsed));
    }

    private long clockMicros() {
        return testTime != null ? testTime.nowMicros() : System.nanoTime() / 1_000;
    }

    private static long micros(Duration d) {
        return d.getSeconds() * 1_000_000 + d.getNano() / 1_000;
    }

    private static Duration minus(Duration d, long micros) {
        return Duration.of(Math.max(0, micros(d) - micros), ChronoUnit.MICROS);
    }

    static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** How many values decide.lua returns per request: allowed, then {@link #VALUES_PER_LIMIT} per limit. */
    static int replyWidth(int limits) {
        return 1 + VALUES_PER_LIMIT * limits;
    }

    /** The decision of request number {@code offset / replyWidth(limits.size())} in a script reply. */
    static Decision toDecision(List<Object> reply, int offset, List<Limit> limits) {
        boolean allowed = number(reply, offset) == 1;
        List<Decision.Quota> quotas = new ArrayList<>(limits.size());
        Duration retry = Duration.ZERO;
        for (int i = 0; i < limits.size(); i++) {
            int base = offset + 1 + VALUES_PER_LIMIT * i;
            Duration limitRetry = Duration.of(number(reply, base + 3), ChronoUnit.MICROS);
            quotas.add(new Decision.Quota(limits.get(i), number(reply, base) == 1, number(reply, base + 1),
                    Duration.of(number(reply, base + 2), ChronoUnit.MICROS), limitRetry,
                    Duration.of(number(reply, base + 4), ChronoUnit.MICROS)));
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

    /** How many callers have a coalesced script call in flight (for tests: none stays behind). */
    int requestsInFlight() {
        return inFlight.size();
    }

    /** The Redisson client this store sends its scripts through. */
    public RedissonClient client() {
        return client;
    }

    /** Shuts the client down if this store created it; a borrowed client is left alone. */
    @Override
    public void close() {
        closed = true;
        if (owned) {
            client.shutdown();
        }
    }

    /**
     * {@code Redisson.create}, on a short-lived thread of our own. Creating a client leaves netty's
     * {@code InternalThreadLocalMap} (a class of the client's loader) in a plain {@code ThreadLocal}
     * of the calling thread. In a servlet container that thread is the container's deployment
     * thread, which outlives the application: it would keep every undeployed application's class
     * loader reachable. Our thread ends here, and its thread-locals with it.
     */
    static RedissonClient createOffThread(Config config) {
        RedissonClient[] created = new RedissonClient[1];
        Throwable[] failed = new Throwable[1];
        Thread creator = new Thread(() -> {
            try {
                created[0] = Redisson.create(config);
            } catch (RuntimeException | Error e) {
                failed[0] = e;
            }
        }, "sluice-redis-create");
        creator.setDaemon(true);
        creator.start();
        boolean interrupted = false;
        while (true) {
            try {
                creator.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the client must not be left behind half-made: finish, then re-assert
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failed[0] instanceof RuntimeException e) {
            throw e;
        }
        if (failed[0] instanceof Error e) {
            throw e;
        }
        return created[0];
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

    /** Settings of a {@link RedisStore}. */
    public static final class Builder {
        private RedissonClient client;
        private boolean owned;
        private TimeSource testTime;
        private boolean coalescing = true;
        private int localRejections = DEFAULT_LOCAL_REJECTIONS;
        private Duration localRejectionTtl = DEFAULT_LOCAL_REJECTION_TTL;
        private Duration startupWait = Duration.ofSeconds(2);

        private Builder() {
        }

        /**
         * How long {@link #build()} waits for a client it created to connect, so that the first
         * decisions find it ready; default 2 s. A Redis that is down is not an error: the store is
         * built anyway and keeps connecting in the background.
         */
        public Builder startupWait(Duration wait) {
            this.startupWait = Objects.requireNonNull(wait, "wait");
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
            this.client = createOffThread(config(store));
            this.owned = true;
            return this;
        }

        /** Whether concurrent requests of one caller are coalesced into one script call; default on. */
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
                throw new IllegalArgumentException("'localRejections' must not be negative, got '" + maximumCallers + "'");
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
            Objects.requireNonNull(ttl, "ttl");
            if (ttl.compareTo(Duration.ofMillis(1)) < 0) {
                throw new IllegalArgumentException("'localRejectionTtl' must be at least 1ms, got '" + ttl + "'");
            }
            this.localRejectionTtl = ttl;
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
