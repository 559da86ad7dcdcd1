package dev.sluice.redis;

import dev.sluice.TimeSource;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The {@code slice.lua} calls of a {@link Slice}: one call gives back what a slice has left and
 * takes the next one, or does either alone. Thread-safe.
 */
final class SliceScript {

    /** slice.lua's answer for state written under other units: decide.lua converts it. */
    static final long OTHER_UNITS = -2;

    private final LuaScript script;
    private final TimeSource testTime;

    /** @param testTime the clock to use instead of the Redis server's, or {@code null} in production */
    SliceScript(RedisCalls calls, TimeSource testTime) {
        this.script = new LuaScript(calls, "slice.lua");
        this.testTime = testTime;
    }

    /** Loads slice.lua into the script cache of every master (and replica). */
    CompletableFuture<Void> loadEverywhere() {
        return script.loadEverywhere();
    }

    /**
     * One call for {@code key} (its one limit {@code encoded}): gives back {@code give} requests,
     * asks for {@code asked} (0: none), and writes the state as {@code back} (the time of the last
     * grant and the units charged back; see {@link TwinBucket#handBack}) says.
     */
    CompletableFuture<List<Object>> call(StorageKey key, String[] encoded, long give, long asked, String[] back) {
        Object[] args = new Object[13];
        args[0] = testTime == null ? "" : Long.toString(testTime.nowMicros());
        System.arraycopy(encoded, 0, args, 1, encoded.length);
        args[8] = Long.toString(give);
        args[9] = Long.toString(asked);
        args[10] = Integer.toString(HotKeys.SHARE);
        args[11] = back[0];
        args[12] = back[1];
        return script.eval(RedisCalls.Reply.LIST, key.keys(), args);
    }
}
