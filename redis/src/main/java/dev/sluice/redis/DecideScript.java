package dev.sluice.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.internal.UnreadableStateException;
import dev.sluice.spi.CompiledLimit;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;

/**
 * The Java side of {@code decide.lua}, and the only Java that knows its {@code KEYS}/{@code ARGV}
 * layout, its algorithm ids and its reply: encodes a call of one or several batches (one caller's
 * identical requests each), sends it through {@link RedisCalls}, never retried by the client, and
 * decodes the reply into each batch's decisions or its own failure.
 *
 * <p>How a call is sent is decided once, when the script is loaded. On a Redis that has functions
 * (7 and later), not a cluster's, the script is also loaded as a function library
 * ({@link LuaSource#library}) and a call is an {@code FCALL}: the part of the text in front of the
 * driver (the helpers, the algorithms' modules) then runs once, at load, instead of on every call,
 * which measured about a fifth of a lone decision's Redis time. Otherwise (Redis 6, whose
 * {@code FUNCTION} is an unknown command; a cluster; a store told not to) a call is an
 * {@code EVALSHA}. A call that did not run because the script or the function is missing
 * ({@code NOSCRIPT}, {@code Function not found}: a restarted or new master, a flush) is sent again
 * in full, as {@code EVAL}, so it runs once; the library is loaded again beside it.
 */
final class DecideScript {

    static final String SCRIPT = LuaSource.compose("decide.lua");
    static final String SHA = sha1(SCRIPT);
    /** The script as a Redis function library, for a Redis that has functions. */
    static final LuaSource.Library LIBRARY = LuaSource.library("decide.lua");
    /** {@code ARGV} values per limit: algorithm id, count, window, perToken, perMicro, capacity, cost. */
    private static final int ARGS_PER_LIMIT = 7;
    /**
     * Values decide.lua returns per limit for the admitted requests: remaining before the batch,
     * then reset and next after {@code m} admissions, each as {@code a + ceil((b + m c) / (d + m e))}.
     */
    static final int BATCH_PER_LIMIT = 11;
    /** Values decide.lua returns per limit for the refused requests: fits, remaining, reset_us, retry_us, next_us. */
    static final int VALUES_PER_LIMIT = 5;
    /** What decide.lua answers in place of {@code admitted} for a batch that failed, before its error's message. */
    private static final long FAILED = -1;

    private final RedisCalls calls;
    private final DecideResends resends;
    private final TimeSource testTime;
    /** Whether to try functions at all: off for a cluster, or when the store was told not to. */
    private final boolean functionsWanted;
    /** Whether calls are FCALLs: set when the library has been loaded, cleared by a Redis without functions. */
    private volatile boolean functions;
    /** Whether the library is being loaded again after a call found it missing: one load at a time. */
    private final AtomicBoolean reloading = new AtomicBoolean();
    // Identity-keyed and weak: a limiter's limits are encoded once, and forgotten with the limiter.
    private final Cache<Limit, String[]> encoded = Caffeine.newBuilder().weakKeys().executor(Runnable::run).build();

    /**
     * @param testTime the clock to decide on instead of the Redis server's, or {@code null} in production
     */
    DecideScript(RedisCalls calls, TimeSource testTime) {
        this(calls, testTime, true);
    }

    /**
     * @param functions whether to send calls as {@code FCALL} where Redis has functions (never on a cluster)
     */
    DecideScript(RedisCalls calls, TimeSource testTime, boolean functions) {
        this.calls = calls;
        this.resends = new DecideResends(calls);
        this.testTime = testTime;
        this.functionsWanted = functions && !calls.cluster();
    }

    /**
     * The id shared.lua's {@code algorithm} function (the Lua scripts' one list of ids) gives each
     * algorithm. Explicit, never the enum's order: reordering {@link Algorithm} must not make Redis
     * count by another algorithm.
     */
    static int id(Algorithm algorithm) {
        return switch (algorithm) {
            case TOKEN_BUCKET -> 1;
            case GCRA -> 2;
            case SLIDING_WINDOW -> 3;
            case FIXED_WINDOW -> 4;
            case SLIDING_LOG -> 5;
            case CONCURRENCY -> throw new IllegalArgumentException("concurrency is taken by lease.lua, not decide.lua");
        };
    }

    /**
     * How many values decide.lua returns for a batch, whatever its size: the number admitted,
     * {@link #BATCH_PER_LIMIT} per limit, and, when some were refused, {@link #VALUES_PER_LIMIT} more per limit.
     */
    static int replyWidth(int limits, boolean refused) {
        return 1 + BATCH_PER_LIMIT * limits + (refused ? VALUES_PER_LIMIT * limits : 0);
    }

    /** Loads the script (and its library) into Redis, blocking; throws if Redis cannot be reached. */
    void load() {
        loadEverywhere().join();
    }

    /**
     * Loads the script into the script cache of every master (and replica), and then, where
     * functions are wanted, its library: once it is loaded, calls are {@code FCALL}s. A library
     * Redis did not take leaves them {@code EVALSHA}s: a Redis that does not know {@code FUNCTION}
     * (or forbids it), and any other failure once the script is loaded (logged), since the
     * script alone decides as well. A failure to load the script fails the load.
     */
    CompletableFuture<Void> loadEverywhere() {
        CompletableFuture<Void> script = calls.load(SCRIPT);
        if (!functionsWanted) {
            return script;
        }
        return script.thenCompose(loaded -> calls.loadLibrary(LIBRARY).handle((done, failure) -> {
            Throwable cause = failure == null ? null : unwrap(failure);
            if (cause != null && !calls.unknownCommand(cause)) {
                // the start of Redis's answer: a client may append the command, the whole library with it
                String answer = String.valueOf(cause.getMessage());
                LoggerFactory.getLogger(DecideScript.class).warn("Redis did not load decide.lua as a function"
                        + " library ({}); decisions are sent as EVALSHA", answer.substring(0, Math.min(160,
                        answer.length())));
            }
            functions = cause == null;
            return null;
        }));
    }

    /** Whether calls are sent as {@code FCALL} (the library is loaded), rather than {@code EVALSHA}. */
    boolean functions() {
        return functions;
    }

    /**
     * A call deciding nothing (no batch), on the node of {@code route}'s slot: a round trip on the
     * decisions' own path (EVALSHA, the script, its reply), charging no one.
     */
    CompletableFuture<List<Object>> nothing(String route) {
        Call call = new Call(route, List.of(), new Object[] {"", "0"}, System.nanoTime() + Batch.NO_DEADLINE_NANOS);
        return first(call)
                .handle((reply, failure) -> failure == null ? CompletableFuture.completedFuture(reply)
                : resend(call, failure)).thenCompose(stage -> stage);
    }

    /**
     * Decides {@code requests} identical requests of the caller with hash tag {@code tag}, one after
     * another, in one call. The reply's function gives request {@code i}'s decision and throws an
     * {@link IllegalStateException} if the reply cannot be read.
     */
    CompletableFuture<IntFunction<Decision>> decide(String tag, List<Limit> limits, int requests) {
        return decide(List.of(new Batch(new StorageKey(tag, limits), requests))).get(0);
    }

    /**
     * Decides several batches, of one caller or of different callers, in one script call: their keys
     * must all live on one Redis (not a cluster's). Each batch's answer is its own: a batch that
     * fails in the script (its error's message in the failure) fails alone; a call that fails
     * (a timeout, a lost connection) fails every batch in it.
     */
    List<CompletableFuture<IntFunction<Decision>>> decide(List<Batch> batches) {
        List<CompletableFuture<IntFunction<Decision>>> answers = new ArrayList<>(batches.size());
        for (int g = 0; g < batches.size(); g++) {
            answers.add(new CompletableFuture<>());
        }
        send(batches).whenComplete((reply, failure) -> {
            int at = 0;
            for (int g = 0; g < batches.size(); g++) {
                CompletableFuture<IntFunction<Decision>> answer = answers.get(g);
                try {
                    if (failure != null) {
                        answer.completeExceptionally(failure(failure));
                        continue;
                    }
                    at = settle(reply, at, batches.get(g), answer);
                } catch (RuntimeException e) {
                    // the reply is out of step from here on: this batch and every later one cannot be read
                    answer.completeExceptionally(new IllegalStateException("unreadable reply from decide.lua: " + e,
                            e));
                    failure = e;
                }
            }
        });
        return answers;
    }

    /** The script's raw reply for one batch: {@link #replyWidth} values, whatever the number of requests. */
    CompletableFuture<List<Object>> send(String tag, List<Limit> limits, int requests) {
        return send(List.of(new Batch(new StorageKey(tag, limits), requests)));
    }

    /** The script's raw reply for several batches: theirs one after another. */
    CompletableFuture<List<Object>> send(List<Batch> batches) {
        return send(call(batches));
    }

    /** The script's raw reply for a call already built; one that fails is sent again as {@link #resend} says. */
    CompletableFuture<List<Object>> send(Call call) {
        return first(call).handle((reply, failure) -> {
            if (failure == null) {
                return CompletableFuture.completedFuture(reply);
            }
            return resend(call, failure);
        }).thenCompose(stage -> stage);
    }

    /** The keys and {@code ARGV} values of one script call deciding {@code batches}, and their latest deadline. */
    Call call(List<Batch> batches) {
        int keyCount = 0;
        long deadline = batches.get(0).deadlineNanos();
        for (Batch batch : batches) {
            keyCount += batch.key().limits.size();
            if (batch.deadlineNanos() - deadline > 0) {
                deadline = batch.deadlineNanos();
            }
        }
        List<Object> keys = new ArrayList<>(keyCount);
        Object[] args = new Object[2 + 2 * batches.size() + ARGS_PER_LIMIT * keyCount];
        args[0] = testTime == null ? "" : Long.toString(testTime.nowMicros());
        args[1] = Integer.toString(batches.size());
        int at = 2;
        for (Batch batch : batches) {
            List<Limit> limits = batch.key().limits;
            args[at++] = Integer.toString(limits.size());
            args[at++] = Integer.toString(batch.size());
            keys.addAll(batch.key().keys());
            for (Limit limit : limits) {
                System.arraycopy(encoded.get(limit, DecideScript::encode), 0, args, at, ARGS_PER_LIMIT);
                at += ARGS_PER_LIMIT;
            }
        }
        return new Call((String) keys.get(0), keys, args, deadline);
    }

    /**
     * One script call's keys and values; {@code route} picks the node (its keys' slot);
     * {@code deadlineNanos} is when the last of its requests stops waiting.
     */
    record Call(String route, List<Object> keys, Object[] args, long deadlineNanos) {
    }

    /** Sends a call the first time: as {@code FCALL} if the library is loaded, else by SHA-1; no retries. */
    private CompletableFuture<List<Object>> first(Call call) {
        if (functions) {
            return calls.fcall(LIBRARY.function(), RedisCalls.Reply.LIST, call.keys(), call.args());
        }
        return evalSha(calls, call);
    }

    /** Sends a call by SHA-1: no retries. */
    static CompletableFuture<List<Object>> evalSha(RedisCalls calls, Call call) {
        return calls.evalSha(SHA, RedisCalls.Reply.LIST, call.keys(), call.args());
    }

    /**
     * After a failed send: the call sent again if it cannot have run, as {@link DecideResends} says, or the failure.
     */
    CompletableFuture<List<Object>> resend(Call call, Throwable failure) {
        Throwable cause = unwrap(failure);
        if (calls.noFunction(cause)) {
            // the function did not run: its library goes back, and this call runs once, in full
            reload();
            return calls.eval(SCRIPT, RedisCalls.Reply.LIST, call.keys(), call.args());
        }
        if (functions && calls.unknownCommand(cause)) {
            // a master without functions now (a failover to an older Redis): EVALSHA from here on
            functions = false;
            return calls.eval(SCRIPT, RedisCalls.Reply.LIST, call.keys(), call.args());
        }
        return resends.resend(call, failure);
    }

    /** Loads the library again, unless a load is under way; a Redis that lost functions keeps to EVALSHA. */
    private void reload() {
        if (reloading.compareAndSet(false, true)) {
            calls.loadLibrary(LIBRARY).whenComplete((loaded, failure) -> {
                if (failure != null && calls.unknownCommand(unwrap(failure))) {
                    functions = false;
                }
                reloading.set(false);
            });
        }
    }

    /**
     * Completes {@code answer} with the batch's decisions read from {@code reply} at {@code at}, or
     * with its own failure if the script failed for it; returns where the next batch's reply starts.
     */
    static int settle(List<Object> reply, int at, Batch batch, CompletableFuture<IntFunction<Decision>> answer) {
        long admitted = number(reply, at);
        if (admitted == FAILED) {
            answer.completeExceptionally(failure(new ScriptError("decide.lua: " + reply.get(at + 1))));
            return at + 2;
        }
        List<Limit> limits = batch.key().limits;
        int end = at + replyWidth(limits.size(), admitted < batch.size());
        if (admitted < 0 || admitted > batch.size() || end > reply.size()) {
            throw new IllegalStateException("a batch of " + batch.size() + " admitted " + admitted + ", reply of "
                    + reply.size());
        }
        answer.complete(DecideReply.decisions(reply.subList(at, end), limits));
        return end;
    }

    /** One limit's {@code ARGV} values, in the order decide.lua reads them. */
    static String[] encode(Limit limit) {
        String[] args = new String[ARGS_PER_LIMIT];
        args[0] = Integer.toString(id(limit.algorithm()));
        CompiledLimit compiled = CompiledLimit.of(limit);
        args[1] = Long.toString(compiled.count());
        args[2] = Long.toString(compiled.periodMicros());
        args[3] = Long.toString(compiled.unitsPerToken());
        args[4] = Long.toString(compiled.unitsPerMicro());
        args[5] = Long.toString(compiled.capacityUnits());
        args[6] = Long.toString(compiled.cost());
        return args;
    }

    static long number(List<Object> reply, int index) {
        return ((Number) reply.get(index)).longValue();
    }

    /**
     * A time of a script's reply; one in the past is read as none. The scripts answer no negative
     * time; see {@link #quota} for why a reply that does is read rather than failed.
     */
    static Duration micros(long micros) {
        return micros <= 0 ? Duration.ZERO : Duration.of(micros, ChronoUnit.MICROS);
    }

    /**
     * A limit's quota from a script's reply, with {@code remaining} read within what the limit can
     * grant: from 0 to its capacity. The scripts keep to that range (a lowered limit or cap is
     * clamped there, in Lua, as in the Java twins); a reply beyond it (a bug, or state another
     * version wrote) is still an answer of a live store about one caller, and failing it instead
     * would count toward the circuit breaker that every caller of the limiter shares.
     */
    static Decision.Quota quota(Limit limit, boolean allowed, long remaining, Duration reset, Duration retry,
            Duration next) {
        return new Decision.Quota(limit, allowed, Math.max(0, Math.min(remaining, limit.capacity())), reset, retry,
                next);
    }

    static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /**
     * A failed script call or group as the limiter is to take it: Redis refusing a command on a key
     * that holds another type ({@code WRONGTYPE}, also inside a script's error) could not read this
     * caller's state, and says nothing of the store (an {@link UnreadableStateException}); any
     * other failure stands.
     */
    static Throwable failure(Throwable failure) {
        Throwable cause = unwrap(failure);
        String message = cause.getMessage();
        // Only Redis writes WRONGTYPE, whichever client's exception carries it.
        if (!(cause instanceof UnreadableStateException) && message != null && message.contains("WRONGTYPE")) {
            return new UnreadableStateException("a key of this caller holds another type: " + message, cause);
        }
        return cause;
    }

    static String sha1(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required of every Java platform", e);
        }
    }

    /** A batch the script failed for, its error's message in this one's (a Lua error, a key of another type). */
    static final class ScriptError extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ScriptError(String message) {
            super(message);
        }
    }
}
