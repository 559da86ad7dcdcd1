package dev.sluice.redis;

import dev.sluice.Decision;
import org.redisson.Redisson;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RScriptAsync;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.connection.ConnectionManager;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;

/**
 * Sends several callers' batches to a Redis Cluster. Their keys hash to different slots, mostly on
 * different nodes, so one script cannot hold them: each batch is one {@code EVALSHA} of
 * {@code decide.lua}, and the batches of one master go out in one Redisson pipeline
 * ({@link RBatch}), which writes them together and reads their replies together. Every batch keeps
 * its own reply or its own error; a batch answered {@code NOSCRIPT} did not run and is sent again,
 * in full, alone.
 *
 * <p>While slots move (a reshard), a batch can be answered {@code MOVED}, {@code ASK} or
 * {@code TRYAGAIN}. Redisson follows the redirections inside a pipeline, but gives up on the
 * pipeline at a {@code TRYAGAIN} (a caller with several keys, some already moved) and then leaves
 * those batches unanswered: their decisions used to wait out their timeout and fail open. Such a
 * batch did not run, so it is sent again, once, alone ({@link DecideScript#resend}), and charged
 * once. One pipeline per master is what makes that safe: when it gives up, every reply it sent for
 * has been read, so a batch still unanswered is one Redis refused to run, never one whose reply is
 * late (a batch that timed out may have run, and is never sent again).
 */
final class ClusterCalls {

    private final RedissonClient client;
    private final DecideScript script;
    /** Redisson's map of slots to masters, to pipeline each master's batches apart; {@code null} if unknown. */
    private final ConnectionManager masters;

    ClusterCalls(RedissonClient client, DecideScript script) {
        this.client = client;
        this.script = script;
        // Not API, but the very map the pipeline itself routes by (Redisson is pinned: a change of
        // it fails the build). Without it, a call is one pipeline and unanswered batches fail.
        this.masters = client instanceof Redisson redisson
                ? redisson.getCommandExecutor().getConnectionManager() : null;
    }

    /** Decides each batch with a script call of its own, one pipeline per master. */
    List<CompletableFuture<IntFunction<Decision>>> decide(List<Batch> batches) {
        if (batches.size() == 1) {
            return script.decide(batches); // alone: a plain call, as if nothing were pipelined
        }
        List<DecideScript.Call> calls = new ArrayList<>(batches.size());
        List<CompletableFuture<IntFunction<Decision>>> answers = new ArrayList<>(batches.size());
        Map<Object, List<Integer>> byMaster = new LinkedHashMap<>();
        for (int b = 0; b < batches.size(); b++) {
            DecideScript.Call call = script.call(List.of(batches.get(b)));
            calls.add(call);
            answers.add(new CompletableFuture<>());
            byMaster.computeIfAbsent(master(call.route()), master -> new ArrayList<>()).add(b);
        }
        for (List<Integer> group : byMaster.values()) {
            send(group, batches, calls, answers);
        }
        return answers;
    }

    /** The master that holds {@code key}'s slot, as Redisson knows it; any one object per master. */
    private Object master(String key) {
        if (masters == null) {
            return this; // unknown: all in one pipeline
        }
        Object master = masters.getWriteEntry(masters.calcSlot(key));
        return master == null ? this : master; // a slot not known yet: the pipeline fails it, and it is sent again
    }

    /** Sends the batches numbered {@code group}, all of one master, in one pipeline, or alone if one. */
    private void send(List<Integer> group, List<Batch> batches, List<DecideScript.Call> calls,
                      List<CompletableFuture<IntFunction<Decision>>> answers) {
        if (group.size() == 1) {
            int b = group.get(0);
            settle(script.send(calls.get(b)), batches.get(b), answers.get(b));
            return;
        }
        // Not atomic (IN_MEMORY: no MULTI), and no retries: a consuming script re-sent after a
        // timeout would charge twice, so a late pipeline fails its batches instead.
        RBatch pipeline = client.createBatch(BatchOptions.defaults()
                .executionMode(BatchOptions.ExecutionMode.IN_MEMORY).retryAttempts(0));
        RScriptAsync on = pipeline.getScript(StringCodec.INSTANCE);
        List<CompletableFuture<List<Object>>> replies = new ArrayList<>(group.size());
        for (int b : group) {
            CompletableFuture<List<Object>> reply = evalSha(on, calls.get(b));
            replies.add(reply);
            DecideScript.Call call = calls.get(b);
            settle(reply.handle((value, failure) -> failure == null ? CompletableFuture.completedFuture(value)
                    : script.resend(call, failure)).thenCompose(stage -> stage), batches.get(b), answers.get(b));
        }
        CompletableFuture<?> done;
        try {
            done = pipeline.executeAsync().toCompletableFuture();
        } catch (RuntimeException e) {
            done = CompletableFuture.failedFuture(e); // nothing was sent
        }
        done.whenComplete((ignored, failure) -> {
            // Each batch's own reply carries its answer; a pipeline that gave up may leave some without one.
            for (int i = 0; i < group.size(); i++) {
                if (!replies.get(i).isDone()) {
                    int b = group.get(i);
                    Throwable cause = failure != null ? DecideScript.unwrap(failure)
                            : new IllegalStateException("the pipeline left a batch unanswered");
                    settle(masters == null ? CompletableFuture.failedFuture(cause) : script.resend(calls.get(b), cause),
                            batches.get(b), answers.get(b));
                }
            }
        });
    }

    /** Sends a call by SHA-1 in a pipeline: no retries. */
    private static CompletableFuture<List<Object>> evalSha(RScriptAsync on, DecideScript.Call call) {
        return on.<List<Object>>evalShaAsync(call.route(), RScript.Mode.READ_WRITE, DecideScript.SHA,
                RScript.ReturnType.LIST, call.keys(), call.args()).toCompletableFuture();
    }

    /** Completes {@code answer} with the batch's decisions from {@code reply}, or its failure. */
    private static void settle(CompletableFuture<List<Object>> reply, Batch batch,
                               CompletableFuture<IntFunction<Decision>> answer) {
        reply.whenComplete((value, failure) -> {
            try {
                if (failure != null) {
                    answer.completeExceptionally(DecideScript.failure(failure));
                } else {
                    DecideScript.settle(value, 0, batch, answer);
                }
            } catch (RuntimeException e) {
                answer.completeExceptionally(new IllegalStateException("unreadable reply from decide.lua: " + e, e));
            }
        });
    }
}
