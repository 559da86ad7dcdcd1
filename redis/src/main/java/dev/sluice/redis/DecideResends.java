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

    /** The most times a call answered TRYAGAIN (or sent to a slot of no known master) is sent again. */
    static final int TRY_AGAIN_SENDS = 5;
    /** The pause before such a call is first sent again, doubling after each. */
    static final long TRY_AGAIN_PAUSE_MILLIS = 5;

    private final RedisCalls calls;

    DecideResends(RedisCalls calls) {
        this.calls = calls;
    }

    /**
     * After a failed send: on {@code NOSCRIPT} the script did not run, so sending it in full (which
     * caches it again) charges once. When its slot was moving ({@link #moving}) it did not run
     * either, and is sent again alone, by SHA-1: at once after {@code MOVED} or {@code ASK}
     * (the client follows both for a call of its own, and routes by the slots it has learnt
     * meanwhile); after {@code TRYAGAIN}, which lasts while a caller's keys are split between two
     * masters, or a slot the client has no master for (for a moment while it updates its map), up to
     * {@value #TRY_AGAIN_SENDS} times, {@value #TRY_AGAIN_PAUSE_MILLIS} ms apart and then twice as
     * long each time. Any other failure stands: a call that timed out may have run.
     */
    CompletableFuture<List<Object>> resend(DecideScript.Call call, Throwable failure) {
        Throwable cause = DecideScript.unwrap(failure);
        if (calls.noScript(cause)) {
            return inFull(call);
        }
        if (moving(cause)) {
            return again(call, cause, 0);
        }
        return CompletableFuture.failedFuture(cause);
    }

    /** Sends a call that did not run ({@code cause}, {@code sent} times already) again, after a pause if TRYAGAIN. */
    private CompletableFuture<List<Object>> again(DecideScript.Call call, Throwable cause, int sent) {
        CompletableFuture<Void> turn = calls.redirected(cause)
                ? CompletableFuture.completedFuture(null) : pause(TRY_AGAIN_PAUSE_MILLIS << sent);
        return turn.thenCompose(go -> DecideScript.evalSha(calls, call)).handle((reply, failure) -> {
            if (failure == null) {
                return CompletableFuture.completedFuture(reply);
            }
            Throwable next = DecideScript.unwrap(failure);
            if (calls.noScript(next)) {
                return inFull(call);
            }
            if (moving(next) && !calls.redirected(next) && sent + 1 < TRY_AGAIN_SENDS) {
                return again(call, next, sent + 1);
            }
            return CompletableFuture.<List<Object>>failedFuture(next);
        }).thenCompose(stage -> stage);
    }

    /** Completes after {@code millis}, on Sluice's timer thread (not the JDK's JVM-global one; see Timeouts). */
    private static CompletableFuture<Void> pause(long millis) {
        return Timeouts.orTimeout(new CompletableFuture<Void>(), TimeUnit.MILLISECONDS.toNanos(millis))
                .exceptionally(elapsed -> null);
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
