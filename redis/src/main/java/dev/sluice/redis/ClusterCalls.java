package dev.sluice.redis;

import dev.sluice.Decision;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RScriptAsync;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntFunction;

/**
 * Sends several callers' batches to a Redis Cluster. Their keys hash to different slots, mostly on
 * different nodes, so one script cannot hold them: each batch is one {@code EVALSHA} of
 * {@code decide.lua}, and all of one call's go out in one Redisson pipeline ({@link RBatch}), which
 * writes each node's commands together and reads their replies together. Every batch keeps its
 * own reply or its own error; a batch answered {@code NOSCRIPT} did not run and is sent again, in
 * full, alone.
 */
final class ClusterCalls {

    private final RedissonClient client;
    private final DecideScript script;

    ClusterCalls(RedissonClient client, DecideScript script) {
        this.client = client;
        this.script = script;
    }

    /** Decides each batch with a script call of its own, all in one pipeline. */
    List<CompletableFuture<IntFunction<Decision>>> decide(List<Coalescer.Batch> batches) {
        if (batches.size() == 1) {
            return script.decide(batches); // alone: a plain call, as if nothing were pipelined
        }
        // Not atomic (IN_MEMORY: no MULTI), and no retries: a consuming script re-sent after a
        // timeout would charge twice, so a late pipeline fails its batches instead.
        RBatch pipeline = client.createBatch(BatchOptions.defaults()
                .executionMode(BatchOptions.ExecutionMode.IN_MEMORY).retryAttempts(0));
        RScriptAsync on = pipeline.getScript(StringCodec.INSTANCE);
        List<CompletableFuture<IntFunction<Decision>>> answers = new ArrayList<>(batches.size());
        for (Coalescer.Batch batch : batches) {
            DecideScript.Call call = script.call(List.of(batch));
            CompletableFuture<IntFunction<Decision>> answer = new CompletableFuture<>();
            DecideScript.evalSha(on, call)
                    .handle((reply, failure) -> failure == null ? CompletableFuture.completedFuture(reply)
                            : script.resend(call, failure))
                    .thenCompose(stage -> stage)
                    .whenComplete((reply, failure) -> {
                        try {
                            if (failure != null) {
                                answer.completeExceptionally(DecideScript.failure(failure));
                            } else {
                                DecideScript.settle(reply, 0, batch, answer);
                            }
                        } catch (RuntimeException e) {
                            answer.completeExceptionally(new IllegalStateException("unreadable reply from decide.lua: " + e, e));
                        }
                    });
            answers.add(answer);
        }
        // Each command's own future carries its reply or its error; the pipeline's result adds nothing.
        try {
            pipeline.executeAsync();
        } catch (RuntimeException e) {
            answers.forEach(answer -> answer.completeExceptionally(e)); // nothing was sent
        }
        return answers;
    }
}
