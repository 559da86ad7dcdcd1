package dev.sluice.redis;

import dev.sluice.Decision;
import dev.sluice.Limit;
import dev.sluice.TimeSource;
import dev.sluice.internal.Keys;
import org.redisson.api.RedissonClient;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/** Sends decide.lua batches of a chosen size directly, as the coalescer would, for tests outside this package. */
public final class ScriptBatches {

    private final DecideScript script;

    /** Batches decided on {@code time} instead of the Redis server's clock. */
    public ScriptBatches(RedissonClient client, TimeSource time) {
        this.script = new DecideScript(new RedissonCalls(client), time);
    }

    /** The decisions of {@code requests} identical requests of {@code caller}, sent in one call, in arrival order. */
    public List<Decision> decide(String caller, List<Limit> limits, int requests) {
        IntFunction<Decision> reply = script.decide(Keys.tag(caller), limits, requests).join();
        List<Decision> decisions = new ArrayList<>(requests);
        for (int i = 0; i < requests; i++) {
            decisions.add(reply.apply(i));
        }
        return decisions;
    }
}
