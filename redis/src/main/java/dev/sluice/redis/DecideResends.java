package dev.sluice.redis;

import dev.sluice.internal.Timeouts;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * What {@link DecideScript} does with a call that failed: sends it again when it cannot have run
 * ({@code NOSCRIPT}, a slot on the move), and lets every other failure stand.
 */
final class DecideResends {

    /** The pause before a call answered TRYAGAIN (or sent to a slot of no known master) is first sent again. */
    static final long TRY_AGAIN_PAUSE_MILLIS = 5;
    /** The longest pause between two sends of such a call: the pause doubles up to it. */
    static final long TRY_AGAIN_MAX_PAUSE_MILLIS = 50;
    /** The longest such a call is sent again, whatever its deadline: a slot left half moved fails it then. */
    static final long TRY_AGAIN_MOST_MILLIS = 5_000;

    private final RedisCalls calls;

    DecideResends(RedisCalls calls) {
        this.calls = calls;
    }

    /**
     * After a failed send: on {@code NOSCRIPT} the script did not run, so sending it in full (which
     * caches it again) charges once. When its slot was moving ({@link #moving}) it did not run
     * either, and is sent again alone, by SHA-1, while its requests still wait: at once after
     * {@code MOVED} or {@code ASK} (the client follows both for a call of its own, and routes by the
     * slots it has learnt meanwhile); after {@code TRYAGAIN}, which lasts while a caller's keys are
     * split between two masters (as long as the reshard takes to move the keys between them, longer
     * on a busy machine), or a slot the client has no master for (for a moment while it updates its
     * map), {@value #TRY_AGAIN_PAUSE_MILLIS} ms later, the pause doubling up to
     * {@value #TRY_AGAIN_MAX_PAUSE_MILLIS} ms, until the call's deadline (at most
     * {@value #TRY_AGAIN_MOST_MILLIS} ms). A fixed number of sends gave up on a slot whose keys were
     * still moving although its callers would have waited. Never after the deadline: its callers
     * have their failure mode by then, and a call sent for them would charge them. Any other failure
     * stands: a call that timed out may have run.
     */
    CompletableFuture<List<Object>> resend(DecideScript.Call call, Throwable failure) {
        Throwable cause = DecideScript.unwrap(failure);
        if (calls.noScript(cause)) {
            return inFull(call);
        }
        if (moving(cause)) {
            long most = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TRY_AGAIN_MOST_MILLIS);
            long giveUp = call.deadlineNanos() - most < 0 ? call.deadlineNanos() : most;
            return again(call, cause, 0, giveUp);
        }
        return CompletableFuture.failedFuture(cause);
    }

    /**
     * Sends a call that did not run ({@code cause}, {@code sent} times already) again, after a pause
     * if TRYAGAIN, unless that would be at or after {@code giveUpNanos}: then {@code cause} stands.
     */
    private CompletableFuture<List<Object>> again(DecideScript.Call call, Throwable cause, int sent,
                                                  long giveUpNanos) {
        long pauseNanos = calls.redirected(cause) ? 0 : pauseNanos(sent);
        if (System.nanoTime() + pauseNanos - giveUpNanos >= 0) {
            return CompletableFuture.failedFuture(cause);
        }
        CompletableFuture<Void> turn = pauseNanos == 0 ? CompletableFuture.completedFuture(null) : pause(pauseNanos);
        // looked at again when the pause is over: a timer late on a busy machine must not send it after the deadline
        return turn.thenCompose(go -> System.nanoTime() - giveUpNanos >= 0 ? CompletableFuture.failedFuture(cause)
                : DecideScript.evalSha(calls, call)).handle((reply, failure) -> {
            if (failure == null) {
                return CompletableFuture.completedFuture(reply);
            }
            Throwable next = DecideScript.unwrap(failure);
            if (calls.noScript(next)) {
                return inFull(call);
            }
            if (moving(next) && !calls.redirected(next)) {
                return again(call, next, sent + 1, giveUpNanos);
            }
            return CompletableFuture.<List<Object>>failedFuture(next);
        }).thenCompose(stage -> stage);
    }

    /** The pause before the send after {@code sent} sends again: doubling from the first, up to the longest. */
    static long pauseNanos(int sent) {
        long millis = sent >= 4 ? TRY_AGAIN_MAX_PAUSE_MILLIS
                : Math.min(TRY_AGAIN_PAUSE_MILLIS << sent, TRY_AGAIN_MAX_PAUSE_MILLIS);
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }

    /** Completes after {@code nanos}, on Sluice's timer thread (not the JDK's JVM-global one; see Timeouts). */
    private static CompletableFuture<Void> pause(long nanos) {
        return Timeouts.orTimeout(new CompletableFuture<Void>(), nanos).exceptionally(elapsed -> null);
    }

    private CompletableFuture<List<Object>> inFull(DecideScript.Call call) {
        return calls.eval(DecideScript.SCRIPT, RedisCalls.Reply.LIST, call.keys(), call.args());
    }

    /**
     * Whether a call failed, without running, because its slot is moving between a cluster's
     * masters: {@code TRYAGAIN} (some of a caller's keys moved, some not yet), a redirection
     * the client gave up on, or a slot the client does not know a master of yet.
     */
    boolean moving(Throwable cause) {
        return calls.tryAgain(cause) || calls.redirected(cause);
    }
}
